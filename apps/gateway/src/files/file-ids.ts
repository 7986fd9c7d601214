/**
 * File ids as clients see them: `file_` and 32 hex digits (the source
 * documents' `"file_id": "file_abc123"` form). Inside, a file is a UUID (its
 * row, its bytes in storage); `file_<hex>` is that UUID without its dashes.
 * Ids handed out before this form, plain UUIDs, are still taken.
 */
const PUBLIC_ID = /^file_([0-9a-f]{32})$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id a client is given for the file `uuid`. */
export function publicFileId(uuid: string): string {
  return `file_${uuid.replaceAll('-', '').toLowerCase()}`;
}

/** The file's UUID, from either form a client may send; undefined for anything else. */
export function fileUuid(id: string): string | undefined {
  if (UUID.test(id)) return id.toLowerCase();
  const hex = PUBLIC_ID.exec(id)?.[1].toLowerCase();
  if (!hex) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
