// A real OpenID Connect provider (panva's certified oidc-provider) for the sign-in tests, on loopback only.
// node provider.mjs PORT REDIRECT_URI: accounts are the logins below (any password, the library's development
// login and consent screens); the ID token lives an hour, except for the account "late" (15 s), whose expiry
// the dashboard must notice itself.
import Provider from 'oidc-provider';

const [port, redirect] = process.argv.slice(2);
const ACCOUNTS = {
  ana: { email: 'ana@bank.example', name: 'Ana Owner' },
  vic: { email: 'vic@bank.example', name: 'Vic Viewer' },
  eve: { email: 'eve@else.example', name: 'Eve Stranger' },
  late: { email: 'late@bank.example', name: 'Late Leaver' },
};
const SHORT_TTL_S = 15;

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'tcrex', client_secret: 'tcrex-test-secret', redirect_uris: [redirect],
    post_logout_redirect_uris: [redirect], // Streamlit returns to /oauth2callback after the provider's sign-out
    response_types: ['code'], grant_types: ['authorization_code'],
  }],
  async findAccount(ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return { accountId: id, async claims() { return { sub: id, email: account.email, email_verified: true, name: account.name }; } };
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false, // the claims go into the ID token, which is what Streamlit keeps
  ttl: {
    IdToken(ctx) {
      const code = ctx && ctx.oidc && ctx.oidc.entities && ctx.oidc.entities.AuthorizationCode;
      return code && code.accountId === 'late' ? SHORT_TTL_S : 3600;
    },
  },
  cookies: { keys: ['tcrex-test-cookie-key'] },
  features: { devInteractions: { enabled: true } },
});
provider.listen(Number(port), '127.0.0.1', () => console.log(`oidc provider listening on ${port}`));
