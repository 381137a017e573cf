// An OpenID Connect provider for the OAUTHBEARER tests (tests/e2e/test_secured_kafka.py): panva's oidc-provider,
// OpenID certified, issuing JWT access tokens by the client-credentials grant, as a company's identity provider
// does for Kafka clients. Usage: node server.mjs PORT CLIENT_ID CLIENT_SECRET AUDIENCE
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const [port, clientId, clientSecret, audience] = process.argv.slice(2);
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' };

const provider = new Provider(`http://127.0.0.1:${port}`, {
  jwks: { keys: [signing] },
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
  }],
  scopes: ['kafka'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'kafka',
        audience,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 3600,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
});
provider.listen(Number(port), '127.0.0.1', () => console.log(`ready ${provider.issuer}`));
