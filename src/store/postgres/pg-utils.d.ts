// node-postgres' own conversion of a JavaScript value into a parameter's text (lib/utils.js),
// which @types/pg does not declare: unit-sql.ts writes the same text as a literal.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): string | Buffer | null }
  export default utils
}
