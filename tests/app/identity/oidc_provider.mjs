// A real OpenID provider for the identity tests (npm oidc-provider, Node 22):
//   node oidc_provider.mjs PORT JWKS_FILE
// Issuer http://127.0.0.1:PORT; its signing keys are the private JWKS in JWKS_FILE (the
// tests made them, so that they can also sign defective tokens the issuer's way).
// One client-credentials client, "agenthost-tests", whose JWT access tokens carry the
// requested resource (RFC 8707) as their audience and the scopes asked for; asking for
// the scope "opaque" gets an opaque token instead, checked by introspection (RFC 7662),
// and "es256" or "eddsa" a JWT signed with that algorithm (else RS256).
// A public client, "mcp-connector", signs users in with authorization code + PKCE through
// the provider's development login and consent forms. Prints "ready" once listening.
import { readFileSync } from "node:fs";
import Provider from "oidc-provider";

const [port, jwksFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const jwks = JSON.parse(readFileSync(jwksFile, "utf8"));
const scope = "agents.read agents.write mcp";
const asked = (ctx) => String(ctx.oidc.params?.scope ?? "").split(" ");
const opaque = (ctx) => asked(ctx).includes("opaque");
// The scopes "es256" and "eddsa" choose the token's algorithm (the keys must be in JWKS_FILE).
const alg = (ctx) => (asked(ctx).includes("es256") ? "ES256" : asked(ctx).includes("eddsa") ? "EdDSA" : "RS256");
const extra = "opaque es256 eddsa";

const provider = new Provider(issuer, {
  jwks,
  clients: [
    {
      client_id: "agenthost-tests",
      client_secret: "agenthost-tests-secret",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
      scope: `${scope} ${extra}`,
    },
    {
      // A connector: authorization code + PKCE, no secret (the dev login form signs in
      // whoever names themselves, and its consent form grants what is asked).
      client_id: "mcp-connector",
      grant_types: ["authorization_code"],
      response_types: ["code"],
      redirect_uris: ["http://localhost:3030/callback"],
      token_endpoint_auth_method: "none",
      scope: `openid ${scope}`,
    },
  ],
  scopes: ["openid", ...scope.split(" "), ...extra.split(" ")],
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: `${scope} ${extra}`,
        audience: resourceIndicator,
        accessTokenTTL: 300,
        accessTokenFormat: opaque(ctx) ? "opaque" : "jwt",
        jwt: { sign: { alg: alg(ctx) } },
      }),
    },
  },
});
provider.listen(Number(port), "127.0.0.1", () => console.log("ready"));
