;; XXH64 (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md), hashing bytes in place
;; in the memory the job's I/O buffer lives in. Importing that memory, instead of copying each
;; block into a hash library's own, is the point: the hash reads the very bytes the kernel writes.
;; Regenerate xxh64-module.ts after editing: npm run build:wasm
(module
  (import "sluice" "memory" (memory 1))

  (func $round (param $acc i64) (param $input i64) (result i64)
    (i64.mul
      (i64.rotl
        (i64.add (local.get $acc) (i64.mul (local.get $input) (i64.const 0xC2B2AE3D27D4EB4F)))
        (i64.const 31))
      (i64.const 0x9E3779B185EBCA87)))

  (func $merge (param $acc i64) (param $lane i64) (result i64)
    (i64.add
      (i64.mul
        (i64.xor (local.get $acc) (call $round (i64.const 0) (local.get $lane)))
        (i64.const 0x9E3779B185EBCA87))
      (i64.const 0x85EBCA77C2B2AE63)))

  ;; xxh64(ptr, len, seed): the hash of memory[ptr, ptr + len).
  (func (export "xxh64") (param $p i32) (param $len i32) (param $seed i64) (result i64)
    (local $end i32) (local $limit i32) (local $h i64)
    (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (if (i32.ge_u (local.get $len) (i32.const 32))
      (then
        (local.set $v1 (i64.add (local.get $seed) (i64.const 0x60EA27EEADC0B5D6))) ;; seed + P1 + P2
        (local.set $v2 (i64.add (local.get $seed) (i64.const 0xC2B2AE3D27D4EB4F))) ;; seed + P2
        (local.set $v3 (local.get $seed))
        (local.set $v4 (i64.sub (local.get $seed) (i64.const 0x9E3779B185EBCA87))) ;; seed - P1
        (local.set $limit (i32.sub (local.get $end) (i32.const 32)))
        (loop $stripes
          (local.set $v1 (call $round (local.get $v1) (i64.load offset=0 (local.get $p))))
          (local.set $v2 (call $round (local.get $v2) (i64.load offset=8 (local.get $p))))
          (local.set $v3 (call $round (local.get $v3) (i64.load offset=16 (local.get $p))))
          (local.set $v4 (call $round (local.get $v4) (i64.load offset=24 (local.get $p))))
          (local.set $p (i32.add (local.get $p) (i32.const 32)))
          (br_if $stripes (i32.le_u (local.get $p) (local.get $limit))))
        (local.set $h
          (i64.add
            (i64.add (i64.rotl (local.get $v1) (i64.const 1)) (i64.rotl (local.get $v2) (i64.const 7)))
            (i64.add (i64.rotl (local.get $v3) (i64.const 12)) (i64.rotl (local.get $v4) (i64.const 18)))))
        (local.set $h (call $merge (local.get $h) (local.get $v1)))
        (local.set $h (call $merge (local.get $h) (local.get $v2)))
        (local.set $h (call $merge (local.get $h) (local.get $v3)))
        (local.set $h (call $merge (local.get $h) (local.get $v4))))
      (else
        (local.set $h (i64.add (local.get $seed) (i64.const 0x27D4EB2F165667C5))))) ;; seed + P5
    (local.set $h (i64.add (local.get $h) (i64.extend_i32_u (local.get $len))))
    (block $done8
      (loop $words
        (br_if $done8 (i32.gt_u (i32.add (local.get $p) (i32.const 8)) (local.get $end)))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.rotl (i64.xor (local.get $h) (call $round (i64.const 0) (i64.load (local.get $p)))) (i64.const 27))
              (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $words)))
    (if (i32.le_u (i32.add (local.get $p) (i32.const 4)) (local.get $end))
      (then
        (local.set $h
          (i64.add
            (i64.mul
              (i64.rotl
                (i64.xor (local.get $h) (i64.mul (i64.load32_u (local.get $p)) (i64.const 0x9E3779B185EBCA87)))
                (i64.const 23))
              (i64.const 0xC2B2AE3D27D4EB4F))
            (i64.const 0x165667B19E3779F9)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))))
    (block $done1
      (loop $bytes
        (br_if $done1 (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $h
          (i64.mul
            (i64.rotl
              (i64.xor (local.get $h) (i64.mul (i64.load8_u (local.get $p)) (i64.const 0x27D4EB2F165667C5)))
              (i64.const 11))
            (i64.const 0x9E3779B185EBCA87)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    ;; avalanche
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33))) (i64.const 0xC2B2AE3D27D4EB4F)))
    (local.set $h (i64.mul (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29))) (i64.const 0x165667B19E3779F9)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))
)
