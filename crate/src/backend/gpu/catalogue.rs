//! Every WGSL kernel of the GPU backend in one table: its name (the file
//! `shaders/<name>.wgsl`, compiled into the library without its comments: see build.rs)
//! and its bindings. The device context reads the table to build bind-group layouts and
//! pipelines; the launch functions in [`super::kernels`] name a kernel and its `override`
//! constants in a [`PipelineKey`].

/// How a binding is used; binding 0 is always the kernel's uniform block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bind {
    Uniform,
    Read,
    ReadWrite,
}

use Bind::{Read, ReadWrite, Uniform};

/// One row of the catalogue.
struct KernelInfo {
    /// The shader's file name without `.wgsl`, also the label of its GPU objects.
    name: &'static str,
    /// The WGSL source.
    source: &'static str,
    /// The bindings of `@group(0)`, in binding order (they match the shader headers).
    binds: &'static [Bind],
}

/// Declares [`Kernel`], [`Kernel::ALL`] and the table of [`KernelInfo`] from one list of
/// `Variant = "shader name": [bindings]`.
macro_rules! catalogue {
    ($($(#[$doc:meta])* $kernel:ident = $name:literal: [$($bind:ident),* $(,)?],)*) => {
        /// Every compute kernel of the GPU backend.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $($(#[$doc])* $kernel,)*
        }

        const COUNT: usize = [$($name),*].len();

        /// Indexed by `Kernel as usize` (the variants in declaration order). A `static`,
        /// so the sources are in the library once (a `const` is copied where it is used).
        static TABLE: [KernelInfo; COUNT] = [$(KernelInfo {
            name: $name,
            source: include_str!(concat!(env!("OUT_DIR"), "/shaders/", $name, ".wgsl")),
            binds: &[$($bind),*],
        },)*];

        impl Kernel {
            pub const ALL: [Kernel; COUNT] = [$(Kernel::$kernel),*];
        }
    };
}

// Forward beside backward, op family by op family.
catalogue! {
    /// `shaders/matmul.wgsl`: C = A·Wᵀ + b, tiled in workgroup memory.
    Matmul = "matmul": [Uniform, Read, Read, Read, ReadWrite, Read],
    /// `shaders/matmul_backward.wgsl`: C (+)= A·B through strides (both Linear gradients).
    MatmulBackward = "matmul_backward": [Uniform, Read, Read, ReadWrite],
    /// `shaders/bias_backward.wgsl`: column sums added to a bias gradient.
    BiasBackward = "bias_backward": [Uniform, Read, ReadWrite],
    /// `shaders/activation.wgsl`: ReLU / GELU in place.
    Activation = "activation": [Uniform, ReadWrite],
    /// `shaders/activation_backward.wgsl`: ReLU / GELU derivative times the gradient.
    ActivationBackward = "activation_backward": [Uniform, Read, Read, ReadWrite],
    /// `shaders/add.wgsl`: x += y (residual connections).
    Add = "add": [Uniform, Read, ReadWrite],
    /// `shaders/layer_norm.wgsl`: one workgroup per row.
    LayerNorm = "layer_norm": [Uniform, Read, Read, Read, ReadWrite],
    /// `shaders/layer_norm_backward.wgsl`: dx per row, then dγ and dβ per column.
    LayerNormBackward = "layer_norm_backward": [
        Uniform, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
    ],
    /// `shaders/batch_norm.wgsl`: eval mode, running statistics.
    BatchNorm = "batch_norm": [Uniform, Read, Read, Read, Read, Read, ReadWrite],
    /// `shaders/batch_norm_train.wgsl`: train mode: batch statistics and the running update.
    BatchNormTrain = "batch_norm_train": [
        Uniform, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
    ],
    /// `shaders/batch_norm_backward.wgsl`: train-mode backward (dx, dγ, dβ).
    BatchNormBackward = "batch_norm_backward": [
        Uniform, Read, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite,
    ],
    /// `shaders/embedding.wgsl`: gather, scale, add absolute positions.
    Embedding = "embedding": [Uniform, Read, Read, Read, ReadWrite],
    /// `shaders/embedding_backward.wgsl`: token gradients gathered into the table.
    EmbeddingBackward = "embedding_backward": [Uniform, Read, Read, ReadWrite],
    /// `shaders/positions_backward.wgsl`: learned-position gradients summed over the batch.
    PositionsBackward = "positions_backward": [Uniform, Read, ReadWrite],
    /// `shaders/rope.wgsl`: rotary positions on q and k, in place.
    Rope = "rope": [Uniform, Read, ReadWrite],
    /// `shaders/rope_backward.wgsl`: rotate gradients back by −angle, in place.
    RopeBackward = "rope_backward": [Uniform, Read, ReadWrite],
    /// `shaders/attention_scores.wgsl`: scores with masks and position biases.
    AttentionScores = "attention_scores": [
        Uniform, Read, Read, Read, Read, Read, Read, ReadWrite, Read,
    ],
    /// `shaders/attention_scores_backward.wgsl`: gradients of q, k, the relative keys and
    /// the additive `w`.
    AttentionScoresBackward = "attention_scores_backward": [
        Uniform, Read, Read, Read, Read, Read, ReadWrite,
    ],
    /// `shaders/softmax.wgsl`: masked softmax, fully masked rows give zeros.
    Softmax = "softmax": [Uniform, Read, ReadWrite],
    /// `shaders/softmax_backward.wgsl`: masked softmax backward, `ds = p ⊙ (dp − Σ p·dp)`.
    SoftmaxBackward = "softmax_backward": [Uniform, Read, Read, ReadWrite],
    /// `shaders/attention_values.wgsl`: probability-weighted values, heads merged.
    AttentionValues = "attention_values": [Uniform, Read, Read, Read, Read, ReadWrite],
    /// `shaders/attention_values_backward.wgsl`: gradients of the probabilities, values and
    /// relative values.
    AttentionValuesBackward = "attention_values_backward": [
        Uniform, Read, Read, Read, Read, Read, Read, Read, ReadWrite,
    ],
    /// `shaders/attention_decode.wgsl`: scores, softmax and values of one query row.
    AttentionDecode = "attention_decode": [
        Uniform, Read, Read, Read, Read, Read, ReadWrite, ReadWrite, ReadWrite,
    ],
    /// `shaders/dropout.wgsl`: the CPU's ChaCha8 dropout masks, optionally applied in place.
    Dropout = "dropout": [Uniform, ReadWrite, ReadWrite],
    /// `shaders/dropout_backward.wgsl`: the gradient times the saved mask, in place.
    DropoutBackward = "dropout_backward": [Uniform, Read, ReadWrite],
    /// `shaders/copy_rows.wgsl`: rows of 32-bit values between buffers (the KV cache's
    /// append and beam reorder).
    CopyRows = "copy_rows": [Uniform, Read, Read, ReadWrite],
    /// `shaders/cross_entropy.wgsl`: loss with label smoothing and its gradient.
    CrossEntropy = "cross_entropy": [
        Uniform, Read, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite,
    ],
    /// `shaders/grad_norm.wgsl`: global gradient norm and clipping.
    GradNorm = "grad_norm": [Uniform, ReadWrite, ReadWrite],
    /// `shaders/adam.wgsl`: one Adam update with the step's learning rate.
    Adam = "adam": [Uniform, Read, ReadWrite, ReadWrite, ReadWrite, ReadWrite],
}

impl Kernel {
    fn info(self) -> &'static KernelInfo {
        &TABLE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The WGSL source, compiled into the library.
    pub fn source(self) -> &'static str {
        self.info().source
    }

    /// Explicit bind-group layout entries (with `layout: None` wgpu would drop bindings a
    /// specialisation does not use, and the bind group would no longer match).
    pub(super) fn layout_entries(self) -> Vec<wgpu::BindGroupLayoutEntry> {
        self.info()
            .binds
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match b {
                        Uniform => wgpu::BufferBindingType::Uniform,
                        Read => wgpu::BufferBindingType::Storage { read_only: true },
                        ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect()
    }
}

/// What the kernels need of a device; `GpuContext::new` refuses a device below this.
pub(super) struct KernelNeeds {
    /// Most storage buffers of one kernel (attention_scores).
    pub storage_buffers: u32,
    pub uniform_buffers: u32,
    pub bindings: u32,
    /// matmul's 16 × 16 workgroup.
    pub invocations: u32,
    pub workgroup_x: u32,
    pub workgroup_y: u32,
    /// matmul's two 16 × 16 f32 tiles.
    pub workgroup_storage: u32,
}

pub(super) fn kernel_needs() -> KernelNeeds {
    let storage = TABLE
        .iter()
        .map(|k| k.binds.iter().filter(|b| **b != Uniform).count())
        .max()
        .unwrap_or(0);
    let bindings = TABLE.iter().map(|k| k.binds.len()).max().unwrap_or(0);
    KernelNeeds {
        storage_buffers: storage as u32,
        uniform_buffers: 1,
        bindings: bindings as u32,
        invocations: 256,
        workgroup_x: 64,
        workgroup_y: 16,
        workgroup_storage: 2 * 16 * 16 * 4,
    }
}

/// A kernel with its `override` constants: one compiled pipeline each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineKey {
    pub kernel: Kernel,
    /// (name, value); booleans are 0 / 1.
    pub constants: Vec<(&'static str, u32)>,
}

impl PipelineKey {
    pub(super) fn plain(kernel: Kernel) -> Self {
        PipelineKey {
            kernel,
            constants: vec![],
        }
    }
}
