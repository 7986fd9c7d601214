import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console is static files (apps/console/dist) that the management server
 * serves under /console/. No inline script or style ends up in index.html, so
 * the pages keep to a Content-Security-Policy of `default-src 'self'`.
 */
export default defineConfig({
  root: dirname(fileURLToPath(import.meta.url)),
  base: '/console/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Never inline an asset as a data: URL (CSP allows 'self' only); no preload polyfill script either.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
