import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fileUuid, publicFileId } from './file-ids';

describe('file ids', () => {
  it('hands out file_<32 hex> and reads it back to the same UUID', () => {
    const uuid = randomUUID();
    const id = publicFileId(uuid);
    expect(id).toMatch(/^file_[0-9a-f]{32}$/);
    expect(fileUuid(id)).toBe(uuid);
    expect(fileUuid(id.toUpperCase().replace('FILE_', 'file_'))).toBe(uuid);
  });

  it('still takes the plain UUIDs handed out before', () => {
    const uuid = randomUUID();
    expect(fileUuid(uuid.toUpperCase())).toBe(uuid);
  });

  it('takes nothing else', () => {
    for (const id of ['file_abc123', 'file_', `file_${'0'.repeat(31)}`, `file_${'g'.repeat(32)}`, 'abc', '']) {
      expect(fileUuid(id)).toBeUndefined();
    }
  });
});
