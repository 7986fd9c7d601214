import { generateSigningJwk, importSigningKey, mintRuntimeGrant, type GrantRequest } from '@mcpgw/grants';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A RuntimeGrant signing key (private Ed25519 JWK) at `path`, made when missing.
 * The file is readable by its owner only: it is a secret, like an SSH key.
 */
export async function ensureGrantKeyFile(path: string): Promise<string> {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify(await generateSigningJwk())}\n`, { mode: 0o600 });
  }
  return path;
}

/**
 * A RuntimeGrant signed with the key in `path` (the one a test stack's
 * gateways trust), without the admin CLI: for tests and benches that need many.
 */
export async function mintGrant(
  path: string,
  request: Pick<GrantRequest, 'agentId' | 'tools'> & Partial<GrantRequest>,
): Promise<string> {
  const key = await importSigningKey(JSON.parse(readFileSync(path, 'utf8')));
  return (await mintRuntimeGrant({ workspaceId: 'demo', taskId: 'T', ttlSeconds: 3_600, ...request }, key)).token;
}
