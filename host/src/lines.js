// The lines of a `quotes.addLines` call handed to the host module without
// their JSON text (lines.rs says what is written where, and why). The lines
// come from a tool's message, a structured clone: plain objects with data
// properties only. Anything else is left to `JSON.stringify`.

// How a value is written: a kind in the low 3 bits of its word, the field's
// position among the names in the next 5 (OTHER_FIELD for a name not among
// them), and the length of its text in `text` above them.
const NULL = 0;
const FALSE = 1;
const TRUE = 2;
const NUMBER = 3;
const STRING = 5;
const NAME = 6;
const OTHER_FIELD = 31;
const LENGTH_SHIFT = 8;
const MAX_LENGTH = 2 ** 24 - 1;

let knownNames = null;
let positions = null;

// Writes `lines` into `tags` and `numbers` and answers the text of their
// strings one after the other; `undefined` (nothing written that counts)
// when `lines` is not an array of plain objects whose values are strings,
// numbers, booleans, null or undefined, or does not fit.
export function flattenLines(lines, names, tags, numbers) {
  if (!Array.isArray(lines) || "toJSON" in lines) return undefined;
  if (names !== knownNames) {
    positions = new Map(names.map((name, at) => [name, at]));
    knownNames = names;
  }
  let t = 1;
  let n = 0;
  let text = "";
  let lastKeys = [];
  let lastFields = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    if (typeof line !== "object" || line === null) return undefined;
    if (Object.getPrototypeOf(line) !== Object.prototype || "toJSON" in line) return undefined;
    const keys = Object.keys(line);
    const values = Object.values(line);
    if (values.length !== keys.length) return undefined;
    if (t + 1 + 2 * keys.length > tags.length || n + keys.length > numbers.length) return undefined;
    // A page writes every line with the same names: their positions are
    // looked up once.
    let fields = lastFields;
    if (keys.length !== lastKeys.length || keys.some((key, at) => key !== lastKeys[at])) {
      fields = keys.map((key) => positions.get(key) ?? OTHER_FIELD);
      lastKeys = keys;
      lastFields = fields;
    }
    const head = t;
    t += 1;
    let entries = 0;
    for (let j = 0; j < values.length; j += 1) {
      const value = values[j];
      let word;
      switch (typeof value) {
        case "string":
          if (value.length > MAX_LENGTH) return undefined;
          word = STRING | (value.length << LENGTH_SHIFT);
          break;
        case "number":
          if (!Number.isFinite(value)) {
            // JSON writes it as null.
            word = NULL;
          } else {
            word = NUMBER;
            // JSON writes -0 as 0.
            numbers[n] = value === 0 ? 0 : value;
            n += 1;
          }
          break;
        case "boolean":
          word = value ? TRUE : FALSE;
          break;
        case "undefined":
          // JSON leaves the field out.
          continue;
        default:
          if (value !== null) return undefined;
          word = NULL;
      }
      const field = fields[j];
      if (field === OTHER_FIELD) {
        const key = keys[j];
        if (key.length > MAX_LENGTH) return undefined;
        tags[t] = NAME | (key.length << LENGTH_SHIFT);
        t += 1;
        text += key;
      }
      if ((word & 7) === STRING) {
        text += value;
      }
      tags[t] = word | (field << 3);
      t += 1;
      entries += 1;
    }
    tags[head] = entries;
  }
  tags[0] = lines.length;
  return text;
}
