import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { asyncapiDocument, DOCUMENT_PATH, TEMPLATE_PATH } from './document';

/** `npm run asyncapi`: writes docs/asyncapi.yaml (run from the repository's root). */
async function main(): Promise<void> {
  const root = process.cwd();
  const text = await asyncapiDocument(readFileSync(resolve(root, TEMPLATE_PATH), 'utf8'), root);
  writeFileSync(resolve(root, DOCUMENT_PATH), text);
  console.log(`wrote ${DOCUMENT_PATH}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
