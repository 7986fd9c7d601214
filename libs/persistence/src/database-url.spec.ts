import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from './database-url';

describe('parseDatabaseUrl', () => {
  it('leaves a single-host URL exactly as written', () => {
    const url = 'postgres://user:p%40ss@db.example:6543/mcpgw?sslmode=require&application_name=x';
    const parsed = parseDatabaseUrl(url);
    expect(parsed.selectsHost).toBe(false);
    expect(parsed.targetSessionAttrs).toBe('any');
    expect(parsed.hosts).toEqual([{ host: 'db.example', port: 6543 }]);
    expect(parsed.hostUrl(0)).toBe(url);
  });

  it('reads several hosts, default ports, and the session wanted', () => {
    const parsed = parseDatabaseUrl(
      'postgres://u:p@h1:5432,h2:5433,h3/db?sslmode=disable&target_session_attrs=read-write&x=1',
    );
    expect(parsed.selectsHost).toBe(true);
    expect(parsed.targetSessionAttrs).toBe('read-write');
    expect(parsed.hosts).toEqual([
      { host: 'h1', port: 5432 },
      { host: 'h2', port: 5433 },
      { host: 'h3', port: 5432 },
    ]);
    expect(parsed.hostUrl(1)).toBe('postgres://u:p@h2:5433/db?sslmode=disable&x=1');
    expect(parsed.hostUrl(2)).toBe('postgres://u:p@h3:5432/db?sslmode=disable&x=1');
    expect(parsed.label(0)).toBe('h1:5432');
  });

  it('defaults to any, as libpq, and accepts primary', () => {
    expect(parseDatabaseUrl('postgresql://h1,h2/db').targetSessionAttrs).toBe('any');
    expect(parseDatabaseUrl('postgresql://h1,h2/db').selectsHost).toBe(true);
    expect(parseDatabaseUrl('postgres://u@h1/db?target_session_attrs=primary').targetSessionAttrs).toBe('primary');
  });

  it('checks the session of a single host when asked to', () => {
    const parsed = parseDatabaseUrl('postgres://u@h1:5432/db?target_session_attrs=read-write');
    expect(parsed.selectsHost).toBe(true);
    expect(parsed.hostUrl(0)).toBe('postgres://u@h1:5432/db');
  });

  it('drops an explicit target_session_attrs=any from the URL it hands on', () => {
    const parsed = parseDatabaseUrl('postgres://u@h1:5432/db?target_session_attrs=any&sslmode=disable');
    expect(parsed.selectsHost).toBe(false);
    expect(parsed.hostUrl(0)).toBe('postgres://u@h1:5432/db?sslmode=disable');
  });

  it('writes IPv6 hosts in brackets and keeps credentials out of labels', () => {
    const parsed = parseDatabaseUrl('postgres://u:secret@[::1]:5432,127.0.0.1:5433/db?target_session_attrs=primary');
    expect(parsed.hosts).toEqual([
      { host: '::1', port: 5432 },
      { host: '127.0.0.1', port: 5433 },
    ]);
    expect(parsed.hostUrl(0)).toBe('postgres://u:secret@[::1]:5432/db');
    expect(parsed.label(0)).toBe('[::1]:5432');
  });

  it('refuses a target_session_attrs it does not know', () => {
    expect(() => parseDatabaseUrl('postgres://h1,h2/db?target_session_attrs=prefer-standby')).toThrow(
      /target_session_attrs must be one of/,
    );
  });
});
