import { ServiceError } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, asDatabaseError, isDatabaseUnreachable } from './database-errors';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('database errors', () => {
  it.each([
    ['admin shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['starting up', withCode('the database system is starting up', '57P03')],
    ['connection exception', withCode('connection failure', '08006')],
    ['refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['terminated', new Error('Connection terminated unexpectedly')],
    ['pool timeout', new Error('timeout exceeded when trying to connect')],
    ['read-only after a failover', withCode('cannot execute INSERT in a read-only transaction', '25006')],
  ])('%s: unreachable, answered as unavailable without the driver text', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
    const mapped = asDatabaseError(error);
    expect(mapped).toBeInstanceOf(DatabaseUnavailableError);
    expect(mapped).toMatchObject({ code: 'unavailable', message: 'the database is unavailable' });
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "x"', '42601')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s: passed through untouched', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
    expect(asDatabaseError(error)).toBe(error);
    expect(asDatabaseError(error)).not.toBeInstanceOf(ServiceError);
  });
});

describe('DatabaseUnavailableError', () => {
  it('is itself unreachable, and says whether the server refused the statement (so it did not run)', () => {
    expect(isDatabaseUnreachable(new DatabaseUnavailableError())).toBe(true);
    expect(asDatabaseError(withCode('terminating connection due to administrator command', '57P01'))).toMatchObject({
      serverRefused: true,
    });
    expect(asDatabaseError(new Error('Connection terminated unexpectedly'))).toMatchObject({ serverRefused: false });
    expect(asDatabaseError(withCode('read ECONNRESET', 'ECONNRESET'))).toMatchObject({ serverRefused: false });
  });

  it('crosses the bus marked database_unavailable', () => {
    expect(new DatabaseUnavailableError()).toMatchObject({ code: 'unavailable', details: ['database_unavailable'] });
  });
});
