import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { adminOidc, type AdminOidcConfig } from '../config/admin-api.env';
import { AdminOidc } from './admin-oidc';

const settings = {
  ADMIN_HOST: '127.0.0.1',
  ADMIN_PORT: 3100,
  ADMIN_OIDC_CLIENT_ID: 'console',
  ADMIN_OIDC_CLIENT_SECRET: 'secret',
  ADMIN_OIDC_REDIRECT_URL: '',
  ADMIN_OIDC_ALLOWED_SUBJECTS: 'alice',
  ADMIN_OIDC_ALLOWED_EMAILS: '',
};
const configOf = (issuer: string) =>
  adminOidc({ ...settings, ADMIN_OIDC_ISSUER: issuer } as Parameters<typeof adminOidc>[0]);

describe('the console OIDC login takes only https providers (http on loopback)', () => {
  it('refuses an http:// issuer elsewhere at start, and takes https or a loopback one', () => {
    expect(() => configOf('http://idp.example.com')).toThrow(/ADMIN_OIDC_ISSUER: .*must be https/);
    expect(() => configOf('http://10.0.0.7:8080/realms/ops')).toThrow(/must be https/);
    expect(configOf('https://idp.example.com/')?.issuer).toBe('https://idp.example.com');
    expect(configOf('http://127.0.0.1:9000')?.issuer).toBe('http://127.0.0.1:9000');
  });

  describe('the discovery document', () => {
    let server: Server | undefined;
    afterEach(() => server?.close());

    /** A provider on loopback whose discovery document names these endpoints. */
    const provider = async (endpoints: (issuer: string) => Record<string, string>): Promise<AdminOidcConfig> => {
      server = createServer((req, res) => {
        const issuer = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer, ...endpoints(issuer) }));
      });
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      return configOf(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)!;
    };

    it('is not used when it sends the code or the client secret over http elsewhere', async () => {
      const config = await provider((issuer) => ({
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: 'http://idp.example.com/token',
        jwks_uri: `${issuer}/jwks`,
      }));
      await expect(new AdminOidc(config).begin()).rejects.toMatchObject({ status: 503, code: 'unavailable' });
    });

    it('is used when every endpoint is https or on loopback (the control)', async () => {
      const config = await provider((issuer) => ({
        authorization_endpoint: 'https://idp.example.com/auth?tenant=ops',
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
      }));
      const { location } = await new AdminOidc(config).begin();
      expect(location).toMatch(/^https:\/\/idp\.example\.com\/auth\?/);
    });
  });
});
