/** A bounded map of message ids to what became of them, oldest forgotten first. */
export class RecentlySeen<V = true> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity = 10_000) {}

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): V | undefined {
    return this.entries.get(id);
  }

  add(id: string, value: V): void {
    this.entries.set(id, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}
