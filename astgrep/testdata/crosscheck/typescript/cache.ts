export interface Entry<V> {
  value: V;
  expires: number;
}

export interface Clock {
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };

export class TTLCache<K, V> {
  private entries = new Map<K, Entry<V>>();
  private hits = 0;
  private misses = 0;

  constructor(private ttl: number, private clock: Clock = systemClock) {
    if (ttl <= 0) {
      throw new Error('ttl must be positive');
    }
  }

  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    if (e.expires < this.clock.now()) {
      this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.value;
  }

  set(key: K, value: V): void {
    this.entries.set(key, { value, expires: this.clock.now() + this.ttl });
  }

  async getOrLoad(key: K, load: (k: K) => Promise<V>): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) {
      return cached;
    }
    const value = await load(key);
    this.set(key, value);
    return value;
  }

  stats(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.entries.size };
  }
}

export type Loader<V> = (key: string) => Promise<V>;

export function memoize<V>(fn: Loader<V>, ttl = 1000): Loader<V> {
  const cache = new TTLCache<string, V>(ttl);
  return (key: string) => cache.getOrLoad(key, fn);
}

export const enumKeys = <T extends object>(o: T): (keyof T)[] => Object.keys(o) as (keyof T)[];

console.log(new TTLCache<string, number>(10).stats());
