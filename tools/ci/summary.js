// Prints vitest's JSON results as one plain line, "N passed, N failed, N skipped",
// so CI can read the outcome whatever the reporter printed above it.
const { readFileSync, existsSync } = require('node:fs');

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log('0 passed, 1 failed (no test results were written)');
  process.exit(0);
}
const results = JSON.parse(readFileSync(file, 'utf8'));
const skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
// A file that fails to load has no failed test, but must still count as a failure.
const failed = results.numFailedTests || results.numFailedTestSuites || 0;
console.log(`Tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
