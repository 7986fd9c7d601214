import { generateSigningJwk } from '@mcpgw/grants';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
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
