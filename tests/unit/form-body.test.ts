// engine/s3/form.ts: the POST form as one multipart/form-data Blob, read back by a real multipart
// parser (undici's Response.formData), and the offset progress counts the file's bytes from.
import { describe, expect, it } from 'vitest'
import { formBody } from '../../engine/s3/form.ts'

const form = {
  url: 'https://uploads.s3.us-east-1.amazonaws.com/',
  fields: {
    'Content-Type': 'image/png',
    key: 'next-s3-uploads/a b/photo.png',
    Policy: 'eyJ4Ijox…',
    'X-Amz-Signature': 'ab12',
  },
}

describe('formBody', () => {
  it('holds every field in order, then the file, last, byte for byte', async () => {
    const file = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 255)
    const { body, type } = formBody(form, file)
    const parsed = await new Response(body, { headers: { 'content-type': type } }).formData()
    expect([...parsed.keys()]).toEqual([...Object.keys(form.fields), 'file'])
    for (const [name, value] of Object.entries(form.fields)) expect(parsed.get(name)).toBe(value)
    expect(new Uint8Array(await (parsed.get('file') as Blob).arrayBuffer())).toEqual(file)
  })

  it('says where the file starts: the bytes at `head` are the file', async () => {
    const file = new Blob(['0123456789'])
    const { body, head } = formBody(form, file)
    expect(await body.slice(head, head + 10).text()).toBe('0123456789')
    expect(await body.slice(head - 4, head).text()).toBe('\r\n\r\n')
  })

  it('a new boundary for each form, in the Content-Type that names it', () => {
    const one = formBody(form, new Uint8Array(1))
    const two = formBody(form, new Uint8Array(1))
    expect(one.type).toMatch(/^multipart\/form-data; boundary=updraft[0-9a-z]+$/)
    expect(one.type).not.toBe(two.type)
  })
})
