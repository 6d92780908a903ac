/** A square with a side. */
export class Square {
  constructor(public side: number) {}

  /** Returns the area of the square. */
  area(): number {
    return this.side * this.side;
  }
}

/** Adds the areas of squares. */
export function total(squares: Square[]): number {
  const unit = "größe 🚀"; return squares.reduce((sum, s) => sum + s.area(), 0) * unit.length;
}
