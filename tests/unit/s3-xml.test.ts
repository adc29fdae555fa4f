// Regression: Go-based stores escape quotes in XML as `&#34;`; only the five named entities were
// decoded, so ETags and messages came back escaped (`&#34;abc&#34;`), and a Complete built from
// such ETags was refused.
import { describe, expect, it } from 'vitest'
import { S3Error } from '../../engine/core/errors.ts'
import { throwIfS3Error } from '../../engine/s3/error-reply.ts'
import { xmlText } from '../../protocol/xml.ts'

describe('XML text from S3 replies', () => {
  it('decodes numeric entities, decimal and hexadecimal, as Go-based stores write them', () => {
    expect(xmlText('<ETag>&#34;9b2cf535f27731c974343645a3985328&#34;</ETag>', 'ETag')).toBe(
      '"9b2cf535f27731c974343645a3985328"',
    )
    expect(xmlText('<ETag>&#x22;abc&#x22;</ETag>', 'ETag')).toBe('"abc"')
    expect(xmlText('<Key>caf&#233; &#x1F600;</Key>', 'Key')).toBe('café 😀')
  })

  it('still decodes the five named entities, and leaves anything else as written', () => {
    expect(xmlText('<ETag>&quot;a&quot; &amp; &lt;b&gt; &apos;c&apos;</ETag>', 'ETag')).toBe(`"a" & <b> 'c'`)
    expect(xmlText('<M>&nbsp; &#xZZ; &#99999999;</M>', 'M')).toBe('&nbsp; &#xZZ; &#99999999;')
  })

  it('an error message with numeric entities reads as plain words', () => {
    const body =
      '<Error><Code>InvalidArgument</Code><Message>Header &#34;x-amz-acl&#34; is not allowed</Message></Error>'
    const error = (() => {
      try {
        throwIfS3Error({ status: 400, header: () => null, body })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(S3Error)
    expect((error as Error).message).toBe('InvalidArgument: Header "x-amz-acl" is not allowed (HTTP 400)')
  })
})
