export class List {
  constructor(items = []) {
    this.items = [...items];
  }

  push(item) {
    this.items.push(item);
    return this;
  }

  map(fn) {
    return new List(this.items.map(fn));
  }

  filter(fn) {
    return new List(this.items.filter((x, i) => fn(x, i)));
  }

  get length() {
    return this.items.length;
  }

  first() {
    if (this.items.length === 0) {
      throw new Error('empty list');
    }
    return this.items[0];
  }

  toString() {
    return `List(${this.items.join(', ')})`;
  }
}

export function range(n) {
  const out = new List();
  for (let i = 0; i < n; i++) {
    out.push(i);
  }
  return out;
}

export const sum = (xs) => xs.items.reduce((a, b) => a + b, 0);

export function debounce(fn, ms) {
  let timer = null;
  return function (...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, args), ms);
  };
}

console.log(range(3).map((x) => x * 2).toString());
console.log(sum(range(10)) === 45);
