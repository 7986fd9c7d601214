import { describe, expect, it } from 'vitest';
import { checkAgentNotice, checkGatewayNotice } from './payload-checks';

describe('checkAgentNotice (what an agent may send)', () => {
  it('takes resource updates that name their resource', () => {
    expect(checkAgentNotice({ kind: 'resource_updated', uri: 'test://a' }).ok).toBe(true);
  });

  it('refuses an update without its resource, and unknown kinds', () => {
    expect(checkAgentNotice({ kind: 'resource_updated' }).ok).toBe(false);
    expect(checkAgentNotice({ kind: 'everything_changed' }).ok).toBe(false);
    expect(checkAgentNotice({ kind: 'resource_updated', uri: '' }).ok).toBe(false);
  });

  it("refuses the gateways' kinds: an agent cannot announce list changes or task states", () => {
    expect(checkAgentNotice({ kind: 'tools_list_changed' }).ok).toBe(false);
    expect(checkAgentNotice({ kind: 'task_status', task_id: 't1' }).ok).toBe(false);
  });
});

describe('checkGatewayNotice (what gateways send)', () => {
  it('takes list changes and task states, not resource updates', () => {
    expect(checkGatewayNotice({ kind: 'tools_list_changed' }).ok).toBe(true);
    expect(checkGatewayNotice({ kind: 'task_status', task_id: 't1' }).ok).toBe(true);
    expect(checkGatewayNotice({ kind: 'task_status' }).ok).toBe(false);
    expect(checkGatewayNotice({ kind: 'resource_updated', uri: 'test://a' }).ok).toBe(false);
  });
});
