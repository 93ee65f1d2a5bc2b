{
  "variables": {
    "cuda%": "<!(node -p \"process.env.CUDA_PATH || '/usr/local/cuda'\")"
  },
  "targets": [
    {
      "target_name": "kp_native_addon",
      "sources": ["addon.c", "../gen/vecadd.wrapper.c"],
      "include_dirs": ["../gen", "<(cuda)/include"],
      "cflags": ["-Wall", "-Wextra"],
      "libraries": ["-L<(cuda)/lib64", "-L<(cuda)/targets/x86_64-linux/lib", "-lcudart_static", "-ldl", "-lpthread", "-lrt"]
    }
  ]
}
