import { useEffect, useRef, useState } from 'react';
import { ApiError, fetchClient, ok, type Schemas } from './api';

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
 * comes; resolves when the stream ends. It is a change, so the client sends
 * the CSRF header (which EventSource could not). A refusal before the stream
 * (400, 403, 404) throws ApiError, as every call through `ok()` does.
 */
export async function playgroundCall(
  agentId: string,
  body: Schemas['PlaygroundCallRequest'],
  onEvent: (event: StreamEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const stream = await ok(
    fetchClient.POST('/agents/{agentId}/playground/calls', {
      params: { path: { agentId } },
      body,
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      signal,
    }),
  );
  if (!stream) throw new ApiError(502, 'internal', 'The playground call answered without a body');
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
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
