pub mod trec;
