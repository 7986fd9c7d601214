import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { installCheapAsyncResourceBind } from './async-resource-bind';

describe('AsyncResource#bind, without the deprecated accessor', () => {
  installCheapAsyncResourceBind();

  it("runs the function in the resource's async context, with the caller's this and arguments", () => {
    const storage = new AsyncLocalStorage<string>();
    const bound = storage.run('at bind time', () =>
      new AsyncResource('test').bind(function (this: unknown, a: number, b: number) {
        return { store: storage.getStore(), self: this, sum: a + b };
      }),
    );
    const receiver = { name: 'receiver' };
    expect(storage.run('at call time', () => bound.call(receiver, 2, 3))).toEqual({
      store: 'at bind time',
      self: receiver,
      sum: 5,
    });
    expect(bound.length).toBe(2);
  });

  it('binds thisArg when given, and refuses what is not a function', () => {
    const self = { n: 1 };
    const bound = new AsyncResource('test').bind(function (this: typeof self) {
      return this.n;
    }, self);
    expect(bound()).toBe(1);
    expect(() => new AsyncResource('test').bind('nope' as never)).toThrow(TypeError);
  });

  it('is what AsyncResource.bind (static) uses too, and defines no asyncResource property', () => {
    const bound = AsyncResource.bind(() => 42);
    expect(bound()).toBe(42);
    expect(Object.getOwnPropertyNames(bound)).not.toContain('asyncResource');
  });
});
