/** `npm run admin -- help`: every command of `COMMANDS` (commands.ts), one or a few lines each. */
export const USAGE = `usage: npm run admin -- <command> [--json]

  agent list                                  list agents, their tool counts and pods online
  agent show --agent <agent>                  one agent: its pods (online or not, last seen,
                                              registered), last registration, tools
  agent create --id <agent> --workspace <ws>  create an agent (pods also create theirs)
  agent quotas --agent <agent> [--concurrent-calls N] [--calls-per-second N]
               [--sessions N] [--streams N]
                                              show an agent's quotas per API key / grant task,
                                              or set them (0: no limit; default: the QUOTA_* one)
  agent auth --agent <agent> [--api-keys on|off] [--oauth on|off]
                                              show or set how callers may authenticate at the
                                              agent's endpoint (both by default; OAuth needs
                                              OAUTH_ISSUERS on the gateways)
  agent update --agent <agent> [--tool-changes accept|hold|reject|default] [--a2a-card public|private]
                                              what a registration that changes the approved tool
                                              definitions does (default: TOOL_CHANGES); whether
                                              the A2A card needs a credential (default: public)
  tools changes [--agent <agent>] [--status pending|approved|rejected|superseded|all] [--limit N]
                                              tool-definition changes, pending by default, each
                                              with its diff against the approved definitions
  tools approve --agent <agent> --version N   serve a pending change's definitions from now on
                                              (clients watching the tool list hear of it)
  tools reject --agent <agent> --version N    keep serving the approved definitions
  audit list [--kind K] [--caller C] [--agent A] [--tool T] [--outcome O] [--since T] [--until T]
             [--limit N, default 50, at most 1000] [--before <next>]
                                              the audit trail, newest first (T: ISO time, or 7d, 12h, 30m ago;
                                              K: tool_call, admin_action, auth_failure, tool_change)
  audit export [the same filters] [--format jsonl]
                                              every matching record, one JSON line each
  audit verify [--since YYYY-MM-DD] [--anchors <file>]
                                              recompute every chain and check its anchors (and those of a
                                              log or export file); names the first broken row, exit 3
  apikey create --agent <agent> [--label L]   mint an API key; the key is printed once
  apikey list [--agent <agent>]               list keys (ids only, never secrets)
  apikey revoke <key-id>                      revoke a key at once on every gateway
  grant mint --workspace <ws> --agent <agent> --task <task> --tools <a,b>
             [--credentials <c1,c2>] [--ttl <seconds, default 3600>]
                                              mint a task-scoped RuntimeGrant (prints it)
  grant revoke <grant-id>                     revoke a grant at once on every gateway
  pat create [--label L]                      mint a personal access token (printed once)
  pat list                                    list personal access tokens (never the tokens)
  pat revoke <pat-id>                         revoke a personal access token
  session list --agent <agent> [--open] [--limit N]
                                              an agent's MCP sessions, newest first
  idempotency list --agent <agent> [--caller C] [--limit N]
                                              an agent's idempotency records (keys, never results)
  idempotency show --agent <agent> --caller <C> --key <K>
                                              one record: the call and the result retries get
  task list --agent <agent> [--status S] [--limit N]
                                              an agent's tasks, newest first
  task show <task-id>                         one task: its questions, result or error
  agent credentials --agent <agent> [--out <file>] [--ttl <seconds>]
                                              issue NATS credentials for the agent's pods (a creds
                                              file; printed only without --out); with --ttl the
                                              servers refuse them after that many seconds
  agent credentials list [--agent <agent>]    the NATS users issued to agents (public keys only)
  agent credentials record --file <agent-users.json>
                                              record the agents' users nats-init made (public keys),
                                              so that revoke --agent finds them; once is enough
  agent credentials revoke --agent <agent> | --user <U…>
                                              revoke all of an agent's NATS credentials, or one user:
                                              the servers close its connections at once
  webhook add --agent <agent> --url <url> --events <e1,e2>
                                              register a webhook (events: tool_call.completed,
                                              tool_call.failed, task.*); its secret is printed once
  webhook list [--agent <agent>]              list webhooks (never secrets)
  webhook remove <webhook-id>                 remove a webhook and its delivery log
  webhook enable <webhook-id>                 send to a webhook a 410 Gone disabled again (same id
                                              and secret; its failed deliveries stay failed)
  webhook rotate-secret <webhook-id>          a new secret (printed once); the old one keeps
                                              signing beside it for WEBHOOK_ROTATION_WINDOW_SECONDS
  webhook reseal-secrets                      after a change of WEBHOOK_SECRET_KEY (the old key in
                                              WEBHOOK_SECRET_PREVIOUS_KEYS): seal every stored secret
                                              again with the new key
  webhook deliveries --webhook <webhook-id>   a webhook's newest deliveries and their attempts
  webhook redeliver <delivery-id>             send a delivery again (same webhook-id)
  console token [--label L] [--ttl <seconds, default 30 days>]
                                              mint an admin token for the management API
                                              (ADMIN_PORT); printed once, stored as a digest
  console token list                          list admin tokens (never the tokens)
  console token revoke <token-id>             refuse an admin token from its next request on
  console login-link [--url <console URL>] [--ttl <seconds, default 600>]
                                              a one-time login link for the console (used once,
                                              then refused; npm start prints one)
  call show <call-id>                         one call by the id its caller got (result _meta
                                              "mcpgw/callId", or call_id on surface B): caller,
                                              agent, tool, outcome, hop times, channel, its
                                              idempotency record, trace id, both messages
                                              (asks the message service over NATS with the
                                              gateway's NATS_URL/NATS_CREDS)
  call list [--agent A] [--tool T] [--caller C] [--outcome ok|tool_error|failed|no_reply]
            [--limit N, default 50, at most 200] [--before <next_before>]
                                              recent tool calls, newest first: agent, tool,
                                              caller, outcome, duration (same NATS settings)`;
