import { sql } from 'kysely';
import { createHash } from 'node:crypto';

const MARK = '/* prepared */ ';

/**
 * Put first in a hot statement (sql`${PREPARED}INSERT …`) to run it as a
 * named prepared statement: PostgreSQL parses it once per connection, and
 * after five executions may keep a generic plan instead of planning each one.
 * For statements whose planning costs more than their work (a CTE over a few
 * rows, run at the rate of the calls), and whose text never changes (values
 * as parameters, no `sql.raw` that varies). Measure before marking one: a
 * generic plan does not know the values, and may be far worse (README). Not
 * for statements that return `*`: a prepared statement whose result columns
 * change under it (a migration that adds one) fails until its connection
 * closes.
 */
export const PREPARED = sql.raw(MARK);

const names = new Map<string, string>();

/** The statement's name if it is marked (from its text: two texts never share one), else undefined. */
export function preparedName(text: string): string | undefined {
  if (!text.startsWith(MARK)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    name = `mcpgw_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}
