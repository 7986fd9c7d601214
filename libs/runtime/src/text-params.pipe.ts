import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { InvalidRequestError } from '@mcpgw/contracts';

/** Ids and names in paths and queries: no control characters (PostgreSQL refuses a NUL in text), not huge. */
const TEXT = /^[^\p{Cc}]{1,256}$/u;

/**
 * Every path parameter and query value of a REST API (the management API, the
 * webhooks REST) is one short line of text, or the request is refused 400
 * before a handler (and the database) sees it: `%00` in an id, a repeated query
 * parameter (an array), a megabyte of id.
 */
@Injectable()
export class TextParamsPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'param' && metadata.type !== 'query') return value;
    if (value === undefined && metadata.type === 'query') return value;
    if (typeof value !== 'string' || !TEXT.test(value)) {
      throw new InvalidRequestError(`${metadata.data ?? metadata.type}: one line of 1-256 characters`);
    }
    return value;
  }
}

/** The same rule for text in bodies (labels). */
export function isText(value: string, max: number): boolean {
  return value.length <= max && !/\p{Cc}/u.test(value);
}
