import { describe, expect, it } from 'vitest';
import { ENVELOPE_HEADROOM_BYTES, mcpBodyLimit } from './body-limit';

describe('mcpBodyLimit', () => {
  it('keeps the configured limit when the bus carries more', () => {
    expect(mcpBodyLimit(1_048_576, 8 * 1_048_576)).toBe(1_048_576);
  });

  it('caps it below the bus max_payload, leaving room for the envelope', () => {
    expect(mcpBodyLimit(1_048_576, 1_048_576)).toBe(1_048_576 - ENVELOPE_HEADROOM_BYTES);
  });

  it('never goes below 1 KiB', () => {
    expect(mcpBodyLimit(1_048_576, 1_000)).toBe(1024);
  });
});
