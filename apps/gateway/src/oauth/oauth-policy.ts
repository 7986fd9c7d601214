import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import { readFileSync } from 'node:fs';
import { parseIssuers, unsafeUrl } from './issuer-urls';
import { parseToolsByClaim, type ToolsByClaim } from './tools-by-claim';

/** What one trusted issuer's tokens may do: the scopes they need, the tools their claim opens, the agents they reach. */
export interface IssuerPolicy {
  issuer: string;
  /** Scopes a token of this issuer needs (403 `insufficient_scope` without them). */
  scopes: readonly string[];
  /** Tools by a claim's values; undefined: every tool. */
  tools?: { claim: string; byValue: ToolsByClaim };
  /** The agents its tokens open: `*` every agent, else these only (opt-in per agent). */
  agents: '*' | ReadonlySet<string>;
}

/** The settings the policy is read from (OAuthSettings). */
export interface PolicySettings {
  OAUTH_ISSUERS: string;
  OAUTH_POLICY: string;
  OAUTH_POLICY_FILE: string;
  OAUTH_SCOPES: string;
  OAUTH_TOOLS_CLAIM: string;
  OAUTH_TOOLS_BY_CLAIM: string;
}

const ENTRY_KEYS = new Set(['issuer', 'scopes', 'tools_claim', 'tools_by_claim', 'agents']);
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const CLAIM_NAME = /^[A-Za-z0-9_:./-]+$/;

/**
 * The trusted issuers and what each may do (README.md here, "Several issuers").
 * With OAUTH_POLICY or OAUTH_POLICY_FILE: its entries, each issuer on its own
 * terms (its scopes default to OAUTH_SCOPES; its tools and agents never
 * default). Without: one OAUTH_ISSUERS issuer with the global settings, on
 * every agent; several are refused, since one issuer's users would get the
 * tools and agents meant for another's. Empty: OAuth off. Throws saying what is
 * wrong, so that a mistake stops the start.
 */
export function loadPolicy(settings: PolicySettings): IssuerPolicy[] {
  const { OAUTH_POLICY: inline, OAUTH_POLICY_FILE: file } = settings;
  const globalScopes = scopesOf(settings.OAUTH_SCOPES);
  if (!inline && !file) {
    const issuers = parseIssuers(settings.OAUTH_ISSUERS);
    if (issuers.length > 1) {
      throw new Error(
        'OAUTH_ISSUERS names several issuers: give each its scopes, tools and agents in OAUTH_POLICY or OAUTH_POLICY_FILE',
      );
    }
    return issuers.map((issuer) => ({
      issuer,
      scopes: globalScopes,
      ...(settings.OAUTH_TOOLS_CLAIM && {
        tools: { claim: settings.OAUTH_TOOLS_CLAIM, byValue: parseToolsByClaim(settings.OAUTH_TOOLS_BY_CLAIM) },
      }),
      agents: '*',
    }));
  }
  if (inline && file) throw new Error('OAUTH_POLICY and OAUTH_POLICY_FILE: set one of them');
  for (const name of ['OAUTH_ISSUERS', 'OAUTH_TOOLS_CLAIM', 'OAUTH_TOOLS_BY_CLAIM'] as const) {
    if (settings[name]) throw new Error(`${name} cannot be set beside a policy: give it per issuer in the policy`);
  }
  const label = inline ? 'OAUTH_POLICY' : `OAUTH_POLICY_FILE ${file}`;
  let text = inline;
  if (file) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(
        `${label}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
  }
  return parsePolicy(text, label, globalScopes);
}

/** A policy document: `{"issuers": [entry, …]}`. */
export function parsePolicy(text: string, label: string, defaultScopes: readonly string[]): IssuerPolicy[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`${label}: not JSON (${(error as Error).message})`);
  }
  if (!isObject(document)) throw new Error(`${label}: must be an object {"issuers": [...]}`);
  const unknown = Object.keys(document).filter((key) => key !== 'issuers');
  if (unknown.length) throw new Error(`${label}: unknown key ${unknown.map((k) => `"${k}"`).join(', ')}`);
  const entries = document.issuers;
  if (!Array.isArray(entries) || entries.length === 0)
    throw new Error(`${label}: "issuers" must list one issuer or more`);
  const policies = entries.map((entry, i) => parseEntry(entry, `${label}: issuers[${i}]`, defaultScopes));
  const seen = new Set<string>();
  for (const { issuer } of policies) {
    if (seen.has(issuer)) throw new Error(`${label}: ${issuer} is given twice`);
    seen.add(issuer);
  }
  return policies;
}

function parseEntry(entry: unknown, at: string, defaultScopes: readonly string[]): IssuerPolicy {
  if (!isObject(entry)) throw new Error(`${at}: must be an object`);
  const unknown = Object.keys(entry).filter((key) => !ENTRY_KEYS.has(key));
  if (unknown.length) throw new Error(`${at}: unknown key ${unknown.map((k) => `"${k}"`).join(', ')}`);
  const { issuer, scopes, tools_claim: claim, tools_by_claim: byClaim, agents } = entry;
  if (typeof issuer !== 'string') throw new Error(`${at}: "issuer" must be the issuer's URL`);
  const problem = unsafeUrl(issuer);
  if (problem) throw new Error(`${at}: ${issuer}: ${problem}`);
  const where = `${at} (${issuer})`;
  return {
    issuer,
    scopes: scopes === undefined ? defaultScopes : stringList(scopes, `${where}: "scopes"`, SCOPE_TOKEN, true),
    ...((claim !== undefined || byClaim !== undefined) && { tools: toolsOf(claim, byClaim, where) }),
    agents: agentsOf(agents, where),
  };
}

function toolsOf(claim: unknown, byClaim: unknown, at: string): IssuerPolicy['tools'] {
  if (typeof claim !== 'string' || !CLAIM_NAME.test(claim)) {
    throw new Error(`${at}: "tools_claim" must name a claim (with "tools_by_claim")`);
  }
  if (!isObject(byClaim)) throw new Error(`${at}: "tools_by_claim" must map claim values to tool lists`);
  const byValue: ToolsByClaim = new Map();
  for (const [value, tools] of Object.entries(byClaim)) {
    byValue.set(value, stringList(tools, `${at}: "tools_by_claim"."${value}"`, /^\S+$/, false));
  }
  return { claim, byValue };
}

function agentsOf(agents: unknown, at: string): IssuerPolicy['agents'] {
  if (agents === '*') return '*';
  const list = stringList(agents, `${at}: "agents" ("*" or agent ids)`, AGENT_ID_PATTERN, false);
  return new Set(list);
}

function stringList(value: unknown, at: string, pattern: RegExp, mayBeEmpty: boolean): string[] {
  if (!Array.isArray(value)) throw new Error(`${at}: must be a list`);
  if (!mayBeEmpty && value.length === 0) throw new Error(`${at}: must not be empty`);
  for (const item of value) {
    if (typeof item !== 'string' || !pattern.test(item))
      throw new Error(`${at}: ${JSON.stringify(item)} is not accepted`);
  }
  return value as string[];
}

function scopesOf(text: string): string[] {
  return text.split(/[ ,]+/).filter(Boolean);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The issuers whose tokens may open this agent's endpoint. */
export function issuersReaching(policy: readonly IssuerPolicy[], agentId: string): IssuerPolicy[] {
  return policy.filter(({ agents }) => agents === '*' || agents.has(agentId));
}
