import { useEffect, useRef, useState } from 'react';
import { ApiError, csrfToken, onUnauthorized, seg } from './api';

/*
 * The management API's two event streams (apps/gateway/src/admin-api/live/README.md):
 * a playground call, POSTed with fetch() (it is a change, so it carries the CSRF
 * header, which EventSource could not send) and read as its body arrives; and
 * the gateways' activity, a GET read by EventSource (the session cookie goes
 * with it; a GET needs no CSRF token). Both same origin: CSP `connect-src 'self'`.
 */

export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Splits a text/event-stream into events as its chunks arrive (comments and `retry:` are skipped). */
export class EventParser {
  private pending = '';

  push(chunk: string): StreamEvent[] {
    this.pending += chunk.replace(/\r\n?/g, '\n');
    const blocks = this.pending.split('\n\n');
    this.pending = blocks.pop() ?? '';
    const events: StreamEvent[] = [];
    for (const block of blocks) {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
    }
    return events;
  }
}

/**
 * Call a tool from the playground and hand each event to `onEvent` as it
 * comes; resolves when the stream ends. A refusal before the stream (400,
 * 403, 404) throws ApiError, as `api()` does.
 */
export async function playgroundCall(
  agentId: string,
  body: { tool: string; arguments: Record<string, unknown> },
  onEvent: (event: StreamEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const csrf = csrfToken();
  const response = await fetch(`/admin/v1/agents/${seg(agentId)}/playground/calls`, {
    method: 'POST',
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      ...(csrf && { 'x-csrf-token': csrf }),
    },
    body: JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
    signal,
  });
  if (!response.ok || !response.body) {
    const answer = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
    const error = answer.error ?? { code: 'internal', message: `HTTP ${response.status}` };
    if (response.status === 401) onUnauthorized();
    throw new ApiError(response.status, error.code, error.message);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new EventParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    for (const event of parser.push(value)) onEvent(event);
  }
}

export type LiveState = 'connecting' | 'live' | 'reconnecting';

/**
 * The gateways' activity (`GET /admin/v1/events`) while the component is
 * mounted: each `call`, `unlisted` and `registration` to `onEvent`. EventSource reconnects
 * by itself (after `bye`, or a network error); `state` says where it is.
 */
export function useActivity(onEvent: (event: StreamEvent) => void): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    const source = new EventSource('/admin/v1/events');
    const forward = (name: string) => (message: MessageEvent<string>) =>
      handler.current({ event: name, data: JSON.parse(message.data) as Record<string, unknown> });
    source.addEventListener('ready', () => setState('live'));
    source.addEventListener('call', forward('call'));
    source.addEventListener('unlisted', forward('unlisted'));
    source.addEventListener('registration', forward('registration'));
    source.addEventListener('bye', () => setState('reconnecting'));
    source.onerror = () => setState('reconnecting');
    return () => source.close();
  }, []);
  return state;
}
