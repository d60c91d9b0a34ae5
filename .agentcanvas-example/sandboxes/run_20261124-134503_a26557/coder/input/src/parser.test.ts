import { parseList } from "./parser";
console.assert(parseList("a, b").join("|") === "a|b");
