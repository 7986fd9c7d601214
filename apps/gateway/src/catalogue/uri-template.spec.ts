import { describe, expect, it } from 'vitest';
import { UriTemplate, UriTemplateError } from './uri-template';

/** What the gateway matched with before: `{...}` as `[^/]+`, by a generated (backtracking) regex. */
function legacy(template: string, uri: string): boolean {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`).test(uri);
}

const matches = (template: string, uri: string) => UriTemplate.parse(template).matches(uri);

describe('URI templates', () => {
  it('match level 1 templates as before', () => {
    const cases: [string, string[]][] = [
      ['test://template/{id}/data', ['test://template/42/data', 'test://template//data', 'test://template/4/2/data']],
      ['file:///{name}.json', ['file:///a.json', 'file:///a.json.json', 'file:///.json', 'file:///a/b.json']],
      ['db://{table}/{id}', ['db://t/1', 'db://t/', 'db://t/1/2', 'db://t-1/x-2']],
      ['x://{a}-{b}', ['x://p-q', 'x://-p-q', 'x://p-q-r', 'x://p--', 'x://p-', 'x://-']],
      ['x://{a}.{b}.{c}', ['x://1.2.3', 'x://1.2.3.4', 'x://1..3', 'x://1.2', 'x://..a.b']],
      ['x{a}{b}{c}', ['xabc', 'xab', 'xabcdef', 'xa/bc', 'x']],
      ['{a}', ['', 'a', 'a/b']],
      ['plain://uri', ['plain://uri', 'plain://uri/', 'plain://ur']],
      ['a{x}aa{y}a', ['aXaaYa', 'aaaaaa', 'aaaaa', 'aXaaaYa', 'aaaaaaa']],
    ];
    for (const [template, uris] of cases) {
      for (const uri of uris)
        expect([template, uri, matches(template, uri)]).toEqual([template, uri, legacy(template, uri)]);
    }
    expect(matches('test://template/{id}/data', 'test://template/42/data')).toBe(true);
  });

  it('give adjacent variables the shortest match but the last', () => {
    expect(matches('x{a}{b}{c}{d}{e}', 'x12345')).toBe(true);
    expect(matches('x{a}{b}{c}{d}{e}', 'x1234')).toBe(false);
    expect(matches('x{a}{b}{c}{d}{e}', 'x1234567/')).toBe(false);
  });

  it('follow RFC 6570 operators', () => {
    expect(matches('repo://{+path}', 'repo://a/b/c')).toBe(true);
    expect(matches('repo://{+path}', 'repo://')).toBe(false);
    expect(matches('doc://page{#section}', 'doc://page')).toBe(true);
    expect(matches('doc://page{#section}', 'doc://page#intro/more')).toBe(true);
    expect(matches('doc://page{#section}', 'doc://pagex')).toBe(false);
    expect(matches('s://search{?q,page}', 's://search')).toBe(true);
    expect(matches('s://search{?q,page}', 's://search?q=a&page=2')).toBe(true);
    expect(matches('s://search{?q}{&page}', 's://search?q=a&page=2')).toBe(true);
    expect(matches('s://search{?q}{&page}', 's://search?q=a#x')).toBe(false);
    expect(matches('f://root{/dir}{/file}', 'f://root/a/b')).toBe(true);
    expect(matches('f://root{/dir}{/file}', 'f://root/a/b/c')).toBe(false);
    expect(matches('f://root{/path*}{?v}', 'f://root/a/b/c?v=1')).toBe(true);
    expect(matches('f://x{.ext}', 'f://x.json')).toBe(true);
    expect(matches('f://x{;v}', 'f://x;v=1')).toBe(true);
    expect(matches('u://{id}{?fields}', 'u://42?fields=a,b')).toBe(true);
  });

  it('refuse what RFC 6570 does not allow', () => {
    for (const bad of ['x://{id', 'x://{a{b}}', 'x://{}', 'x://{=a}', 'x://{a b}', 'x://{.}', 'x://{a..b}']) {
      expect(() => UriTemplate.parse(bad), bad).toThrow(UriTemplateError);
    }
    expect(() => UriTemplate.parse('x://{a.b,c_d,%20e:3,f*}')).not.toThrow();
  });

  it('answer a 10 kB hostile URI in linear time', () => {
    const template = UriTemplate.parse('x{a}{b}{c}{d}{e}');
    const hostile = `x${'a'.repeat(10_240)}/`;
    const started = performance.now();
    expect(template.matches(hostile)).toBe(false);
    expect(UriTemplate.parse('x{a}-{b}-{c}-{d}.{e}').matches(`x${'-'.repeat(10_240)}/`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
