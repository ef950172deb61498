#!/usr/bin/env bash
# Train every shipped model from scratch: one command per checkpoint, run from the
# repository root. The same seed gives the same weights on the same platform (floating-point
# results may differ across CPUs and compilers). Each command prints its held-out
# evaluation as JSON. Takes about 50 minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p tplay

cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding alibi --max-len 256 --out models/grammar-alibi.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding rope --max-len 256 --out models/grammar-rope.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding sinusoidal --max-len 256 --out models/grammar-sinusoidal.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding learned --max-len 256 --out models/grammar-learned.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding relative --max-len 256 --out models/grammar-relative.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding none --max-len 256 --out models/grammar-none.safetensors
cargo run --release -p tplay -- train --task grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding sinusoidal --max-len 256 --share-qk --out models/grammar-shared-qk.safetensors
cargo run --release -p tplay -- train --task translate --seed 1 --steps 8000 --dropout 0.1 --out models/translate.safetensors
cargo run --release -p tplay -- train --task sentiment --seed 1 --steps 2000 --out models/sentiment.safetensors
cargo run --release -p tplay -- train --task tagging --seed 1 --steps 2000 --out models/tagging.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --cooldown 0.4 --out models/reverse.safetensors
cargo run --release -p tplay -- train --task zh-grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding alibi --max-len 256 --out models/zh-grammar-alibi.safetensors
cargo run --release -p tplay -- train --task zh-grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding sinusoidal --max-len 256 --out models/zh-grammar-sinusoidal.safetensors
cargo run --release -p tplay -- train --task zh-grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding learned --max-len 256 --out models/zh-grammar-learned.safetensors
cargo run --release -p tplay -- train --task zh-grammar --seed 1 --steps 4000 --warmup 300 --len 64 --pos-encoding none --max-len 256 --out models/zh-grammar-none.safetensors
cargo run --release -p tplay -- train --task zh-numerals --seed 1 --steps 8000 --dropout 0.1 --out models/zh-numerals.safetensors
cargo run --release -p tplay -- train --task zh-sentiment --seed 1 --steps 2000 --out models/zh-sentiment.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --norm post_ln --cooldown 0.4 --out models/reverse-post-ln.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --norm batch_norm --cooldown 0.4 --out models/reverse-batch-norm.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --residual false --cooldown 0.4 --out models/reverse-no-residual.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --scale-embeddings false --cooldown 0.4 --out models/reverse-no-embed-scale.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --score dot --cooldown 0.4 --out models/reverse-dot.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --score additive --cooldown 0.4 --out models/reverse-additive.safetensors
cargo run --release -p tplay -- train --task reverse --seed 1 --steps 1000 --dropout 0.1 --cooldown 0.4 --out models/reverse-dropout.safetensors
