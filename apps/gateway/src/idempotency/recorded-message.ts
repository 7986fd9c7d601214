import type { ChatMessage } from '@mcpgw/contracts';

/**
 * A record's chat_message by its id, where the key names the posting
 * (`namesItsPosting`), and its time: what an answer rendered again is dated by
 * (A2A's contextId is minted as of the posting).
 */
export type PostingRef = Pick<ChatMessage, 'id' | 'created_at'>;

/** What a record keeps of its call's chat_message: all of it, or a reference. */
export type RecordedMessage = ChatMessage | PostingRef;

/**
 * Whether a surface's key always makes the same chat_message id, so that its
 * records need keep only the id and time: A2A's (the id is a name-based UUID of agent,
 * caller and messageId, ../a2a/message-ids.ts). A request that joins such a
 * record posts its own message under that id and time, which is the first
 * one's call (the same fingerprint: the same tool and arguments). Keeping 80
 * bytes instead of the whole message halves what the claim costs the database
 * backend (README.md, "What a record keeps of the message"). MCP's and REST's
 * ids are new with each claim: their records keep the message, the only place
 * it is.
 */
export function namesItsPosting(surface: string): boolean {
  return surface === 'a2a';
}

/** The part of `message` a claim on `surface` records. */
export function recordedOf(surface: string, message: ChatMessage): RecordedMessage {
  return namesItsPosting(surface) ? { id: message.id, created_at: message.created_at } : message;
}

/**
 * The chat_message a request that joins a record posts: the recorded one, or
 * the request's own under the recorded id and time. The message service knows the id,
 * so either joins the first posting; the request's own is the call only when
 * the first request died before posting, and it is the same call (the record's
 * fingerprint is the request's). Its own `call_id` (one a surface B caller
 * named) is left out: the call's id is the first posting's, which a key that
 * names its posting never names (`callIdFor`: the id's).
 */
export function messageToJoin(recorded: RecordedMessage, own: ChatMessage): ChatMessage {
  if (isWholeMessage(recorded)) return recorded;
  const { call_id: _named, ...rest } = own;
  return { ...rest, id: recorded.id, created_at: recorded.created_at };
}

function isWholeMessage(message: RecordedMessage): message is ChatMessage {
  return 'type' in message;
}
