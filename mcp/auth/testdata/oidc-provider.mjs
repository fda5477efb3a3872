// An OpenID provider for mcplug's end-to-end authorization test:
// oidc-provider (npm), configured as a provider guarding an MCP server
// would be. It reads its settings as JSON from the file named by its
// argument, listens on 127.0.0.1 at a port of the system's choosing,
// prints {"issuer": ...} on its first line, then one JSON line per event
// the test checks (grants, errors, and the marks GET /mark?n=N asks for).
// It ends when its stdin closes.
//
// Settings: resource (the MCP server's URL), scopes (that resource's),
// signingKey (a private P-256 JWK signing the JWT access tokens), clients
// (pre-registered, as oidc-provider takes them), nonceSecret (hex, 32
// bytes: DPoP nonces are required at the token endpoint), port (0 or
// absent: the system's choice; the test restarts the provider at its port),
// accessTokenTTL (seconds; 3600 when absent).
import http from 'node:http';
import fs from 'node:fs';
import Provider, { errors } from 'oidc-provider';

const settings = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const server = http.createServer();
server.listen(settings.port ?? 0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: settings.clients,
    jwks: { keys: [settings.signingKey] },
    scopes: ['openid', 'offline_access', ...settings.scopes],
    // Its one signing key is the P-256 key of settings.
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    pkce: { required: () => true },
    // The sign-in of an MCP client has no ID token to give a session:
    // keep the grant with the refresh token.
    expiresWithSession: async () => false,
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      dPoP: {
        enabled: true,
        nonceSecret: Buffer.from(settings.nonceSecret, 'hex'),
        requireNonce: () => true,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => settings.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== settings.resource) throw new errors.InvalidTarget();
          return {
            scope: settings.scopes.join(' '),
            audience: settings.resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: settings.accessTokenTTL ?? 3600,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
  });
  const grant = (ctx) => ({
    grant_type: ctx.oidc.params?.grant_type,
    client_id: ctx.oidc.client?.clientId,
    auth_method: ctx.oidc.client?.clientAuthMethod,
    dpop_proof: Boolean(ctx.get('DPoP')),
  });
  provider.on('grant.success', (ctx) => out({ event: 'grant', ...grant(ctx), token_type: ctx.body?.token_type }));
  provider.on('grant.error', (ctx, err) => out({ event: 'grant.error', ...grant(ctx), error: err.error, detail: err.error_detail ?? err.error_description }));
  provider.on('authorization.error', (_ctx, err) => out({ event: 'authorization.error', error: err.error, detail: err.error_detail ?? err.error_description }));
  provider.on('registration_create.success', (_ctx, client) => out({ event: 'registration', client_id: client.clientId }));
  provider.on('server_error', (_ctx, err) => out({ event: 'server_error', detail: String(err && err.stack) }));
  // GET /mark prints a mark: every event of a request answered before it
  // was printed before it.
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url.startsWith('/mark?')) {
      out({ event: 'mark', mark: Number(new URL(req.url, issuer).searchParams.get('n')) });
      res.statusCode = 204;
      res.end();
      return;
    }
    callback(req, res);
  });
  out({ issuer });
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
