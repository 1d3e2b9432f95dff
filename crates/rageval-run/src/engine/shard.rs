//! Shards: `eval --shard i/n` scores the samples whose id falls in shard `i` of `n`, so `n`
//! machines (a Kubernetes Indexed Job, a CI matrix) each score a part of one dataset, and
//! `rageval merge` joins their run directories into the run one machine would have written
//! ([`crate::commands::merge`]).
//!
//! A sample's shard is decided by its id alone: the first 8 bytes of the SHA-256 of the id,
//! as a big-endian number, modulo `n`, plus one. The rule never changes with the order of
//! the data, the machine or the version, and spreads ids evenly. Shards are numbered from 1.
//!
//! `--shard auto` ([`ShardRequest::Auto`]) takes the index from the scheduler that started
//! the process — a Kubernetes Indexed Job, a Slurm array, torchrun — and resolves to the
//! same [`Shard`] as the `i/n` it stands for ([`ShardRequest::resolve`], a pure function of
//! the environment it is given). Schedulers count from 0 (Slurm from wherever the array
//! starts); shards from 1.

use std::fmt;
use std::str::FromStr;

use crate::engine::cells::SampleKey;

/// Shard `index` of `count` (1 ≤ index ≤ count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`, or why not.
    pub fn new(index: u32, count: u32) -> Result<Self, String> {
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "shard {index}/{count} does not exist: shards are numbered 1 to n, n ≥ 1"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The shard (of `count`) the sample `id` belongs to.
    pub fn of(id: &str, count: u32) -> u32 {
        (SampleKey::of(id).high() % u64::from(count.max(1))) as u32 + 1
    }

    /// Whether the sample `id` is in this shard.
    pub fn holds(&self, id: &str) -> bool {
        Shard::of(id, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `i/n`, e.g. `2/8`.
    fn from_str(text: &str) -> Result<Self, String> {
        let malformed = || format!("`{text}` is not a shard: expected i/n, e.g. 2/8");
        let (index, count) = text.split_once('/').ok_or_else(malformed)?;
        let index: u32 = index.trim().parse().map_err(|_| malformed())?;
        let count: u32 = count.trim().parse().map_err(|_| malformed())?;
        Shard::new(index, count)
    }
}

/// Kubernetes Indexed Jobs: the pod's completion index, from 0. Kubernetes puts no count in
/// the environment, so `--shard auto/N` gives it (the Job's `completions`).
pub const ENV_JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";
/// Slurm job arrays: this task's id, which starts where the array does (`--array=5-8`).
pub const ENV_SLURM_ARRAY_TASK_ID: &str = "SLURM_ARRAY_TASK_ID";
/// Slurm job arrays: the number of tasks in the array.
pub const ENV_SLURM_ARRAY_TASK_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
/// Slurm job arrays: the first task id of the array.
pub const ENV_SLURM_ARRAY_TASK_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// Slurm job arrays: the step between task ids (`--array=0-15:4`); 1 when unset.
pub const ENV_SLURM_ARRAY_TASK_STEP: &str = "SLURM_ARRAY_TASK_STEP";
/// torchrun (and other launchers in its style): this process's rank, from 0.
pub const ENV_RANK: &str = "RANK";
/// torchrun: the number of processes.
pub const ENV_WORLD_SIZE: &str = "WORLD_SIZE";

/// What `--shard` asks for: a shard given outright, or the scheduler's own index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardRequest {
    /// `i/n`.
    Given(Shard),
    /// `auto` or `auto/N`: the index from the scheduler's environment; the count from the
    /// scheduler where it gives one, else `N` (which must agree with the scheduler's count
    /// when both are there).
    Auto { count: Option<u32> },
}

/// A scheduler whose environment `--shard auto` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    Kubernetes,
    Slurm,
    Torchrun,
}

impl Scheduler {
    /// Every scheduler, in the order their variables are listed in messages.
    pub const ALL: [Scheduler; 3] = [Scheduler::Kubernetes, Scheduler::Slurm, Scheduler::Torchrun];

    /// The variable that holds this scheduler's index; its presence says the scheduler
    /// started the process.
    pub fn index_variable(self) -> &'static str {
        match self {
            Scheduler::Kubernetes => ENV_JOB_COMPLETION_INDEX,
            Scheduler::Slurm => ENV_SLURM_ARRAY_TASK_ID,
            Scheduler::Torchrun => ENV_RANK,
        }
    }

    /// The variable that holds the count, where the scheduler sets one.
    pub fn count_variable(self) -> Option<&'static str> {
        match self {
            Scheduler::Kubernetes => None,
            Scheduler::Slurm => Some(ENV_SLURM_ARRAY_TASK_COUNT),
            Scheduler::Torchrun => Some(ENV_WORLD_SIZE),
        }
    }
}

impl fmt::Display for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scheduler::Kubernetes => "a Kubernetes Indexed Job",
            Scheduler::Slurm => "a Slurm array",
            Scheduler::Torchrun => "torchrun",
        })
    }
}

/// Why `--shard auto` found no shard in the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AutoShardError {
    /// No scheduler's index variable is set.
    #[error(
        "--shard auto found no scheduler's index: none of {kubernetes} (Kubernetes Indexed \
         Job, with --shard auto/N), {slurm} (Slurm array) or {torchrun} (torchrun, with \
         {world_size}) is set; give --shard i/n",
        kubernetes = ENV_JOB_COMPLETION_INDEX,
        slurm = ENV_SLURM_ARRAY_TASK_ID,
        torchrun = ENV_RANK,
        world_size = ENV_WORLD_SIZE
    )]
    NoIndex,

    /// More than one scheduler's index variable is set, so which one is meant is a guess.
    #[error("--shard auto found more than one scheduler's index ({set}); give --shard i/n")]
    Ambiguous { set: String },

    /// A variable is set to something other than a whole number ≥ 0.
    #[error("{variable}={value:?} is not a whole number ≥ 0")]
    NotANumber {
        variable: &'static str,
        value: String,
    },

    /// A variable the scheduler always sets beside its index is missing.
    #[error("{variable} is not set although {index_variable} is: is {scheduler} starting this?")]
    Missing {
        variable: &'static str,
        index_variable: &'static str,
        scheduler: Scheduler,
    },

    /// Neither the scheduler nor `auto/N` gives the count.
    #[error(
        "{index_variable} gives the index but {scheduler} gives no shard count: give it as \
         --shard auto/N (for a Kubernetes Job, N is its completions)"
    )]
    NoCount {
        index_variable: &'static str,
        scheduler: Scheduler,
    },

    /// `auto/N` and the scheduler's count disagree.
    #[error("--shard auto/{given} disagrees with {variable}={theirs}")]
    CountMismatch {
        given: u32,
        variable: &'static str,
        theirs: u32,
    },

    /// A Slurm task id that is not the array's first id plus a multiple of its step.
    #[error(
        "{id_variable}={id} is not {min_variable}={min} plus a multiple of \
         {step_variable}={step}: give the array as a range (--array=0-3, --array=0-15:4) or \
         give --shard i/n",
        id_variable = ENV_SLURM_ARRAY_TASK_ID,
        min_variable = ENV_SLURM_ARRAY_TASK_MIN,
        step_variable = ENV_SLURM_ARRAY_TASK_STEP
    )]
    NotARange { id: u32, min: u32, step: u32 },

    /// The index read is beyond the count (or the count is 0).
    #[error("{variable}={value} would be shard {index}/{count}, which does not exist")]
    OutOfRange {
        variable: &'static str,
        value: u32,
        index: u64,
        count: u32,
    },
}

impl ShardRequest {
    /// The shard this request names, reading a scheduler's variables through `env` for
    /// `auto` (a variable set to an empty string counts as unset). `Given` needs no
    /// environment.
    pub fn resolve(self, env: impl Fn(&str) -> Option<String>) -> Result<Shard, AutoShardError> {
        let given = match self {
            ShardRequest::Given(shard) => return Ok(shard),
            ShardRequest::Auto { count } => count,
        };
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let mut present = Scheduler::ALL
            .into_iter()
            .filter(|scheduler| env(scheduler.index_variable()).is_some());
        let (Some(scheduler), None) = (present.next(), present.next()) else {
            let set: Vec<String> = Scheduler::ALL
                .into_iter()
                .filter_map(|scheduler| {
                    let name = scheduler.index_variable();
                    env(name).map(|value| format!("{name}={value}"))
                })
                .collect();
            return Err(if set.is_empty() {
                AutoShardError::NoIndex
            } else {
                AutoShardError::Ambiguous {
                    set: set.join(", "),
                }
            });
        };
        let number = |variable: &'static str| -> Result<Option<u32>, AutoShardError> {
            env(variable)
                .map(|value| {
                    value
                        .trim()
                        .parse::<u32>()
                        .map_err(|_| AutoShardError::NotANumber {
                            variable,
                            value: value.clone(),
                        })
                })
                .transpose()
        };
        let index_variable = scheduler.index_variable();
        let raw_index = number(index_variable)?.unwrap_or_default();
        let from_zero = match scheduler {
            Scheduler::Slurm => slurm_position(raw_index, &number)?,
            Scheduler::Kubernetes | Scheduler::Torchrun => raw_index,
        };
        let theirs = match scheduler.count_variable() {
            Some(variable) => number(variable)?.map(|count| (variable, count)),
            None => None,
        };
        let count = match (given, theirs) {
            (Some(given), Some((variable, theirs))) if given != theirs => {
                return Err(AutoShardError::CountMismatch {
                    given,
                    variable,
                    theirs,
                });
            }
            (Some(count), _) | (None, Some((_, count))) => count,
            (None, None) => {
                return Err(AutoShardError::NoCount {
                    index_variable,
                    scheduler,
                });
            }
        };
        let index = u64::from(from_zero) + 1;
        u32::try_from(index)
            .ok()
            .and_then(|index| Shard::new(index, count).ok())
            .ok_or(AutoShardError::OutOfRange {
                variable: index_variable,
                value: raw_index,
                index,
                count,
            })
    }
}

/// A Slurm task's position in its array, from 0: `(id − min) / step`.
fn slurm_position(
    id: u32,
    number: &impl Fn(&'static str) -> Result<Option<u32>, AutoShardError>,
) -> Result<u32, AutoShardError> {
    let min = number(ENV_SLURM_ARRAY_TASK_MIN)?.ok_or(AutoShardError::Missing {
        variable: ENV_SLURM_ARRAY_TASK_MIN,
        index_variable: ENV_SLURM_ARRAY_TASK_ID,
        scheduler: Scheduler::Slurm,
    })?;
    let step = number(ENV_SLURM_ARRAY_TASK_STEP)?.unwrap_or(1).max(1);
    match id.checked_sub(min) {
        Some(offset) if offset % step == 0 => Ok(offset / step),
        _ => Err(AutoShardError::NotARange { id, min, step }),
    }
}

impl fmt::Display for ShardRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardRequest::Given(shard) => shard.fmt(f),
            ShardRequest::Auto { count: None } => f.write_str("auto"),
            ShardRequest::Auto { count: Some(count) } => write!(f, "auto/{count}"),
        }
    }
}

impl FromStr for ShardRequest {
    type Err = String;

    /// `i/n` (e.g. `2/8`), `auto` or `auto/n` (e.g. `auto/4`).
    fn from_str(text: &str) -> Result<Self, String> {
        let Some(rest) = text.trim().strip_prefix("auto") else {
            return text.parse().map(ShardRequest::Given);
        };
        let malformed = || format!("`{text}` is not a shard: expected i/n, auto or auto/n");
        if rest.is_empty() {
            return Ok(ShardRequest::Auto { count: None });
        }
        let count: u32 = rest
            .strip_prefix('/')
            .ok_or_else(malformed)?
            .trim()
            .parse()
            .map_err(|_| malformed())?;
        if count == 0 {
            return Err(format!("`{text}` asks for 0 shards: n ≥ 1"));
        }
        Ok(ShardRequest::Auto { count: Some(count) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_does_not_exist() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(Shard { index: 2, count: 8 }.to_string(), "2/8");
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/-2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_id_is_in_exactly_one_shard_and_shards_are_even() {
        let count = 4;
        let mut sizes = [0usize; 4];
        for i in 0..4_000 {
            let id = format!("sample-{i}");
            let holders: Vec<u32> = (1..=count)
                .filter(|&index| Shard { index, count }.holds(&id))
                .collect();
            assert_eq!(holders.len(), 1, "{id}");
            sizes[holders[0] as usize - 1] += 1;
        }
        assert!(
            sizes.iter().all(|&n| (900..1_100).contains(&n)),
            "{sizes:?}"
        );
        // "s1": SHA-256 begins e8bc163c82eee187; that number mod 4 is 3, so shard 4.
        assert_eq!(Shard::of("s1", 4), 4);
    }

    /// `request` resolved in an environment holding only `vars`.
    fn resolve(request: &str, vars: &[(&str, &str)]) -> Result<Shard, AutoShardError> {
        let env: std::collections::HashMap<String, String> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        request
            .parse::<ShardRequest>()
            .unwrap()
            .resolve(|name| env.get(name).cloned())
    }

    fn shard(index: u32, count: u32) -> Result<Shard, AutoShardError> {
        Ok(Shard { index, count })
    }

    #[test]
    fn requests_parse_and_print() {
        for text in ["2/8", "auto", "auto/4"] {
            assert_eq!(text.parse::<ShardRequest>().unwrap().to_string(), text);
        }
        for bad in ["auto/0", "auto/", "autox", "auto/x", "auto4", "5/4"] {
            assert!(bad.parse::<ShardRequest>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_given_shard_needs_no_environment() {
        assert_eq!(resolve("3/4", &[("RANK", "0")]), shard(3, 4));
    }

    #[test]
    fn kubernetes_counts_from_zero_and_takes_the_count_from_the_request() {
        assert_eq!(
            resolve("auto/4", &[("JOB_COMPLETION_INDEX", "2")]),
            shard(3, 4)
        );
        assert_eq!(
            resolve("auto/4", &[("JOB_COMPLETION_INDEX", "0")]),
            shard(1, 4)
        );
        assert_eq!(
            resolve("auto", &[("JOB_COMPLETION_INDEX", "2")]),
            Err(AutoShardError::NoCount {
                index_variable: ENV_JOB_COMPLETION_INDEX,
                scheduler: Scheduler::Kubernetes
            })
        );
        let beyond = resolve("auto/4", &[("JOB_COMPLETION_INDEX", "4")]).unwrap_err();
        assert_eq!(
            beyond.to_string(),
            "JOB_COMPLETION_INDEX=4 would be shard 5/4, which does not exist"
        );
    }

    #[test]
    fn slurm_arrays_count_from_their_first_task_id_in_steps() {
        const ID: &str = "SLURM_ARRAY_TASK_ID";
        const MIN: &str = "SLURM_ARRAY_TASK_MIN";
        const COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
        const STEP: &str = "SLURM_ARRAY_TASK_STEP";
        let array = [(MIN, "0"), (COUNT, "4")];
        assert_eq!(
            resolve("auto", &[(ID, "2"), array[0], array[1]]),
            shard(3, 4)
        );
        assert_eq!(
            resolve("auto", &[(ID, "7"), (MIN, "5"), (COUNT, "4")]),
            shard(3, 4),
            "--array=5-8"
        );
        assert_eq!(
            resolve("auto/4", &[(ID, "1"), (MIN, "1"), (COUNT, "4")]),
            shard(1, 4),
            "--array=1-4"
        );
        let stepped = |id| resolve("auto", &[(ID, id), (MIN, "0"), (COUNT, "4"), (STEP, "4")]);
        assert_eq!(stepped("8"), shard(3, 4), "--array=0-15:4");
        assert_eq!(
            stepped("6"),
            Err(AutoShardError::NotARange {
                id: 6,
                min: 0,
                step: 4
            })
        );
        assert_eq!(
            resolve("auto/8", &[(ID, "2"), array[0], array[1]]),
            Err(AutoShardError::CountMismatch {
                given: 8,
                variable: ENV_SLURM_ARRAY_TASK_COUNT,
                theirs: 4
            })
        );
        assert_eq!(
            resolve("auto", &[(ID, "2"), (COUNT, "4")]),
            Err(AutoShardError::Missing {
                variable: ENV_SLURM_ARRAY_TASK_MIN,
                index_variable: ENV_SLURM_ARRAY_TASK_ID,
                scheduler: Scheduler::Slurm
            })
        );
    }

    #[test]
    fn torchrun_reads_rank_and_world_size() {
        assert_eq!(
            resolve("auto", &[("RANK", "2"), ("WORLD_SIZE", "4")]),
            shard(3, 4)
        );
        assert_eq!(resolve("auto/4", &[("RANK", "3")]), shard(4, 4));
        assert!(matches!(
            resolve("auto", &[("RANK", "x"), ("WORLD_SIZE", "4")]),
            Err(AutoShardError::NotANumber {
                variable: "RANK",
                ..
            })
        ));
    }

    #[test]
    fn without_an_index_or_with_two_auto_refuses_naming_the_variables() {
        let none = resolve(
            "auto/4",
            &[("JOB_COMPLETION_INDEX", " "), ("WORLD_SIZE", "4")],
        );
        assert_eq!(none, Err(AutoShardError::NoIndex));
        let message = AutoShardError::NoIndex.to_string();
        for name in [
            "JOB_COMPLETION_INDEX",
            "SLURM_ARRAY_TASK_ID",
            "RANK",
            "WORLD_SIZE",
        ] {
            assert!(message.contains(name), "{message}");
        }
        assert_eq!(
            resolve("auto/4", &[("JOB_COMPLETION_INDEX", "1"), ("RANK", "0")]),
            Err(AutoShardError::Ambiguous {
                set: "JOB_COMPLETION_INDEX=1, RANK=0".to_string()
            })
        );
    }
}
