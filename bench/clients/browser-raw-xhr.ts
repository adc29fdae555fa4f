import { runPage } from './browser-page.ts'

/**
 * The ceiling: `queueSize` plain XHR workers PUT the same Blob slices to URLs the harness
 * presigned (after creating the multipart upload), then one Complete. No signing, retries,
 * progress or checks in the page.
 */
void runPage(async (body, { partSize, queueSize, raw }) => {
  if (!raw) throw new Error('raw-xhr needs presigned part URLs')
  const count = raw.partUrls.length
  const etags: string[] = []
  let next = 0
  const worker = async () => {
    for (let n = next++; n < count; n = next++) {
      const { etag } = await xhr('PUT', raw.partUrls[n]!, body.slice(n * partSize, (n + 1) * partSize))
      etags[n] = etag
    }
  }
  await Promise.all(Array.from({ length: Math.min(queueSize, count) }, worker))
  const xml = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${etag}</ETag></Part>`).join('')}</CompleteMultipartUpload>`
  const { status, text } = await xhr('POST', raw.completeUrl, xml)
  if (status !== 200 || text.includes('<Error>')) throw new Error(`Complete failed: ${status} ${text.slice(0, 200)}`)
})

function xhr(method: string, url: string, body: Blob | string) {
  return new Promise<{ status: number; etag: string; text: string }>((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open(method, url)
    request.onload = () =>
      request.status < 300
        ? resolve({ status: request.status, etag: request.getResponseHeader('ETag') ?? '', text: request.responseText })
        : reject(new Error(`${method} answered ${request.status}`))
    request.onerror = () => reject(new Error(`${method} network error`))
    request.send(body)
  })
}
