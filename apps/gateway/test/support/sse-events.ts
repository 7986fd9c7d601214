/** One server-sent event: its name and its data, parsed as JSON. */
export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * The events of a `text/event-stream` answer, as they arrive (comments and
 * `retry:` skipped), until the stream ends or `until` says stop.
 */
export async function readEvents(
  response: Response,
  until: (event: SseEvent, all: SseEvent[]) => boolean = () => false,
): Promise<SseEvent[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n');
        const name = lines.find((line) => line.startsWith('event: '))?.slice(7);
        const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
        if (name === undefined || data === undefined) continue;
        const event = { event: name, data: JSON.parse(data) as unknown };
        events.push(event);
        if (until(event, events)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
