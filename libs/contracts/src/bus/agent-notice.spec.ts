import { describe, expect, it } from 'vitest';
import { checkAgentNotice } from './payload-checks';

describe('checkAgentNotice', () => {
  it('takes list changes, and resource updates that name their resource', () => {
    expect(checkAgentNotice({ kind: 'tools_list_changed' }).ok).toBe(true);
    expect(checkAgentNotice({ kind: 'resource_updated', uri: 'test://a' }).ok).toBe(true);
  });

  it('refuses an update without its resource, and unknown kinds', () => {
    expect(checkAgentNotice({ kind: 'resource_updated' }).ok).toBe(false);
    expect(checkAgentNotice({ kind: 'everything_changed' }).ok).toBe(false);
    expect(checkAgentNotice({ kind: 'resource_updated', uri: '' }).ok).toBe(false);
  });
});
