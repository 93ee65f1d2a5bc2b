import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isSystemDependency, watchedDependencies } from '../../packages/unplugin/src/core/watch.js'

const deps = suite('watchedDependencies')
const dirs = ['/usr/include/', '/usr/lib/', '/usr/local/cuda/', '/usr/local/cuda-13.0/']

deps('keeps the project\'s own headers, drops the source itself and toolkit/system headers', () => {
  const file = '/proj/src/k.cu'
  const list = [file, '/proj/src/common.h', '/proj/include/util.cuh', '/usr/local/cuda/include/cuda_runtime.h',
    '/usr/local/cuda-13.0/targets/x86_64-linux/include/crt/host_defines.h', '/usr/include/c++/12/cmath', '/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h']
  assert.equal(watchedDependencies(file, list, dirs), ['/proj/src/common.h', '/proj/include/util.cuh'])
})

deps('a directory prefix matches whole path components only', () => {
  assert.is(isSystemDependency('/usr/local/cuda-project/k.h', ['/usr/local/cuda/']), false)
  assert.is(isSystemDependency('/usr/libfoo/x.h', ['/usr/lib/']), false)
  assert.is(isSystemDependency('/usr/lib/x.h', ['/usr/lib/']), true)
})

deps('the default list covers the CUDA toolkit nvcc reports on this machine', () => {
  assert.is(isSystemDependency('/usr/local/cuda/include/cuda_runtime.h'), true)
  assert.is(isSystemDependency('/usr/include/stdio.h'), true)
  assert.is(isSystemDependency(process.cwd() + '/src/k.cuh'), false)
})

deps.run()
