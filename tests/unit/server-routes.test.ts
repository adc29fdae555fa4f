import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../server/config.ts'
import { RequestError } from '../../server/request-error.ts'
import { routeOf } from '../../server/routes.ts'

const base = { accessKeyId: 'AKID', secretAccessKey: 'secret', bucket: 'uploads', region: 'eu-west-1' }

/** The route, or the refusal's status and message. */
const route = (pathname: string, mount = '/api/s3-upload') => {
  const found = routeOf('POST', pathname, mount)
  return found instanceof RequestError ? { status: found.status, error: found.message } : found
}

describe('routeOf', () => {
  it('names the upload request on the mount path and each sub-route under it, trailing slashes ignored', () => {
    expect(route('/api/s3-upload')).toBe('upload')
    expect(route('/api/s3-upload/')).toBe('upload')
    expect(route('/api/s3-upload/complete')).toBe('complete')
    expect(route('/api/s3-upload/list-parts//')).toBe('list-parts')
    expect(route('/api/s3-upload/info')).toBe('info')
  })

  it('refuses any other path under the mount (404), deeper paths and near-misses included', () => {
    for (const path of [
      '/api/s3-upload/complet',
      '/api/s3-upload/upload',
      '/api/s3-upload/parts/1',
      '/api/s3-upload//parts',
    ]) {
      expect(route(path)).toMatchObject({
        status: 404,
        error: expect.stringContaining(`No route POST ${path} on the upload API`),
      })
    }
  })

  it('takes a path sharing the mount as a prefix for outside it, not a sub-route', () => {
    expect(route('/api/s3-uploads/parts')).toMatchObject({
      status: 404,
      error: expect.stringContaining("path setting is '/api/s3-upload'"),
    })
  })

  it('serves from the root when mounted at /', () => {
    expect(route('/', '')).toBe('upload')
    expect(route('/parts', '')).toBe('parts')
    expect(route('/nope', '')).toMatchObject({ status: 404, error: expect.stringContaining('POST /, POST /parts') })
  })
})

describe('the path setting', () => {
  it('defaults to /api/s3-upload and loses a trailing slash', () => {
    expect(resolveConfig(base, {}).path).toBe('/api/s3-upload')
    expect(resolveConfig({ ...base, path: '/files/' }, {}).path).toBe('/files')
    expect(resolveConfig({ ...base, path: '/' }, {}).path).toBe('')
  })

  it.each(['api/s3-upload', 'https://app.test/api/s3-upload', '/api/:path*', '/api?x=1', '/api//upload', ''])(
    'refuses %j, saying what a path is',
    (path) => {
      expect(() => resolveConfig({ ...base, path }, {})).toThrow(
        /^updraft: path must be the URL path the handler is mounted at, such as '\/api\/s3-upload'/,
      )
    },
  )
})
