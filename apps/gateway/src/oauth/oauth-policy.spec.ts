import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { issuersReaching, loadPolicy, type PolicySettings } from './oauth-policy';

const NONE: PolicySettings = {
  OAUTH_ISSUERS: '',
  OAUTH_POLICY: '',
  OAUTH_POLICY_FILE: '',
  OAUTH_SCOPES: 'mcp:tools',
  OAUTH_TOOLS_CLAIM: '',
  OAUTH_TOOLS_BY_CLAIM: '',
};
const CORP = 'https://login.corp.example';
const PARTNER = 'https://idp.partner.example';
const TWO = {
  issuers: [
    { issuer: CORP, agents: '*', tools_claim: 'groups', tools_by_claim: { admins: ['*'], support: ['echo'] } },
    { issuer: PARTNER, agents: ['echo-agent'], scopes: ['partner:mcp'], tools_claim: 'groups', tools_by_claim: {} },
  ],
};
const policy = (document: unknown, more: Partial<PolicySettings> = {}) =>
  loadPolicy({ ...NONE, OAUTH_POLICY: JSON.stringify(document), ...more });

describe('the OAuth policy: each issuer its scopes, tools and agents', () => {
  it('gives each issuer of a policy its own scopes (OAUTH_SCOPES when it names none), tools and agents', () => {
    const [corp, partner] = policy(TWO);
    expect(corp).toMatchObject({ issuer: CORP, scopes: ['mcp:tools'], agents: '*' });
    expect(corp.tools?.claim).toBe('groups');
    expect(corp.tools?.byValue.get('admins')).toEqual(['*']);
    expect(partner).toMatchObject({ issuer: PARTNER, scopes: ['partner:mcp'] });
    expect(partner.tools?.byValue.size).toBe(0);
    expect(issuersReaching([corp, partner], 'echo-agent').map((p) => p.issuer)).toEqual([CORP, PARTNER]);
    expect(issuersReaching([corp, partner], 'hr-agent').map((p) => p.issuer)).toEqual([CORP]);
  });

  it('reads the same policy from OAUTH_POLICY_FILE', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'oauth-policy-')), 'policy.json');
    writeFileSync(file, JSON.stringify(TWO));
    expect(loadPolicy({ ...NONE, OAUTH_POLICY_FILE: file }).map((p) => p.issuer)).toEqual([CORP, PARTNER]);
    expect(() => loadPolicy({ ...NONE, OAUTH_POLICY_FILE: `${file}.missing` })).toThrow(/cannot be read \(ENOENT\)/);
  });

  it('keeps one OAUTH_ISSUERS issuer working with the global settings, on every agent', () => {
    const [only] = loadPolicy({
      ...NONE,
      OAUTH_ISSUERS: CORP,
      OAUTH_TOOLS_CLAIM: 'roles',
      OAUTH_TOOLS_BY_CLAIM: 'a=*',
    });
    expect(only).toMatchObject({ issuer: CORP, scopes: ['mcp:tools'], agents: '*', tools: { claim: 'roles' } });
    expect(loadPolicy(NONE)).toEqual([]);
  });

  it('refuses several OAUTH_ISSUERS without a policy, and global issuer or tools settings beside one', () => {
    expect(() => loadPolicy({ ...NONE, OAUTH_ISSUERS: `${CORP},${PARTNER}` })).toThrow(/several issuers.*OAUTH_POLICY/);
    expect(() => policy(TWO, { OAUTH_ISSUERS: CORP })).toThrow(/OAUTH_ISSUERS cannot be set beside a policy/);
    expect(() => policy(TWO, { OAUTH_TOOLS_CLAIM: 'groups' })).toThrow(/OAUTH_TOOLS_CLAIM cannot be set/);
    expect(() => policy(TWO, { OAUTH_TOOLS_BY_CLAIM: 'a=*' })).toThrow(/OAUTH_TOOLS_BY_CLAIM cannot be set/);
    expect(() => policy(TWO, { OAUTH_POLICY_FILE: '/etc/policy.json' })).toThrow(/set one of them/);
  });

  it.each([
    ['an unknown top-level key', { issuers: TWO.issuers, default: {} }, /unknown key "default"/],
    ['no issuers', { issuers: [] }, /one issuer or more/],
    ['an unknown entry key', { issuers: [{ issuer: CORP, agents: '*', tool_claim: 'x' }] }, /unknown key "tool_claim"/],
    ['an issuer over http', { issuers: [{ issuer: 'http://idp.example', agents: '*' }] }, /must be https/],
    ['an issuer given twice', { issuers: [TWO.issuers[0], { issuer: CORP, agents: '*' }] }, /given twice/],
    ['an entry without agents (no default)', { issuers: [{ issuer: CORP }] }, /"agents"/],
    ['an empty agent list', { issuers: [{ issuer: CORP, agents: [] }] }, /must not be empty/],
    ['a malformed agent id', { issuers: [{ issuer: CORP, agents: ['a b'] }] }, /"a b" is not accepted/],
    [
      'tools_by_claim without tools_claim',
      { issuers: [{ issuer: CORP, agents: '*', tools_by_claim: {} }] },
      /tools_claim/,
    ],
    ['a claim value with no tools', { issuers: [{ ...TWO.issuers[0], tools_by_claim: { admins: [] } }] }, /"admins"/],
    ['a scope that is not a scope', { issuers: [{ issuer: CORP, agents: '*', scopes: ['a"b'] }] }, /"scopes"/],
  ])('refuses %s, saying where', (_label, document, message) => {
    expect(() => policy(document)).toThrow(message);
    expect(() => loadPolicy({ ...NONE, OAUTH_POLICY: '{"issuers": [' })).toThrow(/OAUTH_POLICY: not JSON/);
  });

  it('accepts http on a loopback address, as OAUTH_ISSUERS does', () => {
    expect(policy({ issuers: [{ issuer: 'http://127.0.0.1:9000', agents: '*' }] })[0].issuer).toBe(
      'http://127.0.0.1:9000',
    );
  });
});
