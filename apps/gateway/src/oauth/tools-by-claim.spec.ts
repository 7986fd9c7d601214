import { describe, expect, it } from 'vitest';
import { parseToolsByClaim, toolsOf } from './tools-by-claim';

describe('OAUTH_TOOLS_BY_CLAIM', () => {
  const map = parseToolsByClaim('admins=*; support=echo,crm_lookup ;mcp:tools=echo');

  it("adds up the tools of the caller's values: a list, or a space-separated string like scope", () => {
    expect(toolsOf(map, ['support', 'mcp:tools', 'unmapped'])).toEqual(['echo', 'crm_lookup']);
    expect(toolsOf(map, 'openid mcp:tools')).toEqual(['echo']);
  });

  it('opens every tool for *, and none for a caller without a mapped value or the claim', () => {
    expect(toolsOf(map, ['support', 'admins'])).toBeUndefined();
    expect(toolsOf(map, ['guests'])).toEqual([]);
    expect(toolsOf(map, undefined)).toEqual([]);
    expect(toolsOf(map, 42)).toEqual([]);
  });

  it('refuses what it cannot read, saying what', () => {
    expect(() => parseToolsByClaim('admins')).toThrow(/value=tool/);
    expect(() => parseToolsByClaim('=echo')).toThrow(/value=tool/);
    expect(() => parseToolsByClaim('support=')).toThrow(/names no tools/);
    expect(() => parseToolsByClaim('a=echo;a=sleep')).toThrow(/twice/);
    expect(parseToolsByClaim('').size).toBe(0);
  });
});
