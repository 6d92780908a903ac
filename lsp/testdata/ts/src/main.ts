import { Square, total } from "./geometry";

const squares = [new Square(2), new Square(3)];
const label = "größe 🚀"; console.log(label, total(squares));
