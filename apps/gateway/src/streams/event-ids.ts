/**
 * SSE event ids of session streams: `<stream id>-<sequence>`. The stream id is
 * a random UUID, so ids are unique across a session's streams (and every
 * other's), and a `Last-Event-ID` names the stream to resume and where.
 */
export interface EventPosition {
  streamId: string;
  seq: number;
}

const EVENT_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-([1-9][0-9]{0,8})$/;

export function eventId(streamId: string, seq: number): string {
  return `${streamId}-${seq}`;
}

/** The stream and position a `Last-Event-ID` names, or undefined when it is not one of ours. */
export function parseEventId(value: string | undefined): EventPosition | undefined {
  const match = value === undefined ? null : EVENT_ID.exec(value.trim());
  return match ? { streamId: match[1], seq: Number(match[2]) } : undefined;
}
