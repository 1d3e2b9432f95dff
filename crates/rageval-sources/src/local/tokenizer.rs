//! The tantivy tokenizer of the local index: rageval's own word splitter
//! ([`rageval_core::text::words`]) — lower-cased, Han runs segmented by jieba, other scripts
//! split on Unicode word boundaries, punctuation dropped.
//!
//! Rather than `tantivy-jieba`, this reuses the process's one jieba instance (its dictionary
//! takes ~150 ms and tens of MB to load) and tokenises exactly as the lexical metrics do, so a
//! query and a chunk meet on the same words. Token offsets are not tracked (the index stores
//! no highlights); positions are token ordinals.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The name the tokenizer is registered under in every local index. The suffix is a
/// version: an index built with another tokenizer must be rebuilt, not searched.
pub const TOKENIZER_NAME: &str = "rageval_words_v1";

/// The tokenizer (stateless).
#[derive(Debug, Clone, Copy, Default)]
pub struct WordsTokenizer;

/// The tokens of one text, produced up front.
pub struct WordsStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for WordsTokenizer {
    type TokenStream<'a> = WordsStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordsStream {
        let tokens = rageval_core::text::words(text)
            .into_iter()
            .enumerate()
            .map(|(position, word)| Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text: word,
                position_length: 1,
            })
            .collect();
        WordsStream { tokens, next: 0 }
    }
}

impl TokenStream for WordsStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_and_english_words_in_order() {
        let mut tokenizer = WordsTokenizer;
        let mut stream = tokenizer.token_stream("少儿编程教育市场规模, Python!");
        let mut words = Vec::new();
        while let Some(token) = stream.next() {
            words.push((token.position, token.text.clone()));
        }
        let texts: Vec<&str> = words.iter().map(|(_, w)| w.as_str()).collect();
        assert!(
            texts.contains(&"编程") && texts.contains(&"python"),
            "{texts:?}"
        );
        assert_eq!(words.last().map(|(p, _)| *p), Some(words.len() - 1));
    }
}
