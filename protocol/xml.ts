// The little XML S3 speaks, for the engine, the server's tools and the CLI alike.

/** Text of the first `<tag>` in a small S3 XML reply (S3 replies are flat enough for this). */
export function xmlText(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)
  return match?.[1] === undefined ? undefined : unescapeXml(match[1])
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/**
 * The five named entities (S3's ETags arrive as `&quot;…&quot;`) and numeric ones: Go-based
 * stores write `&#34;…&#34;`, and `&#x22;` is as valid.
 */
const unescapeXml = (text: string) =>
  text.replace(/&(#x?)?(\w+);/g, (entity, numeric: string | undefined, name: string) => {
    // `0x22` and `34` both read as numbers; anything else (or past Unicode's range) stays as it is.
    const code = numeric ? Number(numeric.replace('#', '0') + name) : NaN
    return code <= 0x10ffff ? String.fromCodePoint(code) : numeric ? entity : (XML_ENTITIES[name] ?? entity)
  })

/** For text inside an element of a request body (CompleteMultipartUpload's ETags, tag sets). */
export const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
