import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configurationPage, PAGE_PATH } from './configuration';

/** `npm run docs:configuration`: writes docs/configuration.md from the apps' env classes (run from the repository's root). */
function main(): void {
  const root = process.cwd();
  writeFileSync(resolve(root, PAGE_PATH), configurationPage(root));
  console.log(`wrote ${PAGE_PATH}`);
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
