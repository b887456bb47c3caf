"""The papers replikit's methods rest on: one bibliography for the library, the command line
and the report.

Words a user reads cite papers as Author (Year) (``citation_text``) and list them in full
(``reference_list``): the command line's ``--help`` and the report's Methods block do, and the
report writes the BibTeX (``bibtex_for``) to ``references.bib`` beside ``report.html`` so a
user can paste both into a paper. ``SECTION_REFERENCES`` lists the papers behind each
capability.
"""

from __future__ import annotations

import re

__all__ = ["BIBTEX", "SECTION_REFERENCES", "bibtex_for", "citation_text", "full_citation",
           "reference_list"]

#: key -> (short citation, BibTeX entry)
BIBTEX: dict[str, tuple[str, str]] = {
    "vijayakumar2021": ("Vijayakumar & Cheung (2021)", """@article{vijayakumar2021,
  author  = {Vijayakumar, Ranjith and Cheung, Mike W.-L.},
  title   = {Assessing Replicability of Machine Learning Results: An Introduction to Methods
             on Predictive Accuracy in Social Sciences},
  journal = {Social Science Computer Review},
  volume  = {39},
  number  = {5},
  pages   = {768--801},
  year    = {2021},
  doi     = {10.1177/0894439319888445}
}"""),
    "parmigiani2023": ("Parmigiani (2023)", """@article{parmigiani2023,
  author  = {Parmigiani, Giovanni},
  title   = {Defining Replicability of Prediction Rules},
  journal = {Statistical Science},
  volume  = {38},
  number  = {4},
  pages   = {543--556},
  year    = {2023},
  doi     = {10.1214/23-STS891}
}"""),
    "gardner2017": ("Gardner & Brooks (2017)", """@inproceedings{gardner2017,
  author    = {Gardner, Josh and Brooks, Christopher},
  title     = {Statistical Approaches to the Model Comparison Task in Learning Analytics},
  booktitle = {Proceedings of the Workshop on Methodology in Learning Analytics (MLA) at LAK 2017},
  series    = {CEUR Workshop Proceedings},
  volume    = {1915},
  year      = {2017},
  url       = {https://ceur-ws.org/Vol-1915/paper2.pdf}
}"""),
    "etherington2019": ("Etherington & Lieske (2019)", """@article{etherington2019,
  author  = {Etherington, Thomas R. and Lieske, David J.},
  title   = {[Re] Resampling Methods for Evaluating Classification Accuracy of Wildlife
             Habitat Models},
  journal = {ReScience C},
  volume  = {5},
  year    = {2019},
  doi     = {10.5281/zenodo.3234524}
}"""),
    "verbyla1989": ("Verbyla & Litvaitis (1989)", """@article{verbyla1989,
  author  = {Verbyla, David L. and Litvaitis, John A.},
  title   = {Resampling Methods for Evaluating Classification Accuracy of Wildlife Habitat
             Models},
  journal = {Environmental Management},
  volume  = {13},
  number  = {6},
  pages   = {783--787},
  year    = {1989},
  doi     = {10.1007/BF01868317}
}"""),
    "efron1983": ("Efron (1983)", """@article{efron1983,
  author  = {Efron, Bradley},
  title   = {Estimating the Error Rate of a Prediction Rule: Improvement on Cross-Validation},
  journal = {Journal of the American Statistical Association},
  volume  = {78},
  number  = {382},
  pages   = {316--331},
  year    = {1983},
  doi     = {10.1080/01621459.1983.10477973}
}"""),
    "efron1997": ("Efron & Tibshirani (1997)", """@article{efron1997,
  author  = {Efron, Bradley and Tibshirani, Robert},
  title   = {Improvements on Cross-Validation: The .632+ Bootstrap Method},
  journal = {Journal of the American Statistical Association},
  volume  = {92},
  number  = {438},
  pages   = {548--560},
  year    = {1997},
  doi     = {10.1080/01621459.1997.10474007}
}"""),
    "bates2024": ("Bates, Hastie & Tibshirani (2024)", """@article{bates2024,
  author  = {Bates, Stephen and Hastie, Trevor and Tibshirani, Robert},
  title   = {Cross-Validation: What Does It Estimate and How Well Does It Do It?},
  journal = {Journal of the American Statistical Association},
  volume  = {119},
  number  = {546},
  pages   = {1434--1445},
  year    = {2024},
  doi     = {10.1080/01621459.2023.2197686}
}"""),
    "clopper1934": ("Clopper & Pearson (1934)", """@article{clopper1934,
  author  = {Clopper, C. J. and Pearson, E. S.},
  title   = {The Use of Confidence or Fiducial Limits Illustrated in the Case of the Binomial},
  journal = {Biometrika},
  volume  = {26},
  number  = {4},
  pages   = {404--413},
  year    = {1934},
  doi     = {10.1093/biomet/26.4.404}
}"""),
    "nadeau2003": ("Nadeau & Bengio (2003)", """@article{nadeau2003,
  author  = {Nadeau, Claude and Bengio, Yoshua},
  title   = {Inference for the Generalization Error},
  journal = {Machine Learning},
  volume  = {52},
  number  = {3},
  pages   = {239--281},
  year    = {2003},
  doi     = {10.1023/A:1024068626366}
}"""),
    "bouckaert2004": ("Bouckaert & Frank (2004)", """@inproceedings{bouckaert2004,
  author    = {Bouckaert, Remco R. and Frank, Eibe},
  title     = {Evaluating the Replicability of Significance Tests for Comparing Learning
               Algorithms},
  booktitle = {Advances in Knowledge Discovery and Data Mining (PAKDD 2004)},
  series    = {Lecture Notes in Computer Science},
  volume    = {3056},
  pages     = {3--12},
  year      = {2004},
  doi       = {10.1007/978-3-540-24775-3_3}
}"""),
    "dietterich1998": ("Dietterich (1998)", """@article{dietterich1998,
  author  = {Dietterich, Thomas G.},
  title   = {Approximate Statistical Tests for Comparing Supervised Classification Learning
             Algorithms},
  journal = {Neural Computation},
  volume  = {10},
  number  = {7},
  pages   = {1895--1923},
  year    = {1998},
  doi     = {10.1162/089976698300017197}
}"""),
    "alpaydin1999": ("Alpaydın (1999)", """@article{alpaydin1999,
  author  = {Alpayd{\\i}n, Ethem},
  title   = {Combined 5 x 2 cv {F} Test for Comparing Supervised Classification Learning
             Algorithms},
  journal = {Neural Computation},
  volume  = {11},
  number  = {8},
  pages   = {1885--1892},
  year    = {1999},
  doi     = {10.1162/089976699300016007}
}"""),
    "corani2015": ("Corani & Benavoli (2015)", """@article{corani2015,
  author  = {Corani, Giorgio and Benavoli, Alessio},
  title   = {A {Bayesian} Approach for Comparing Cross-Validated Algorithms on Multiple
             Data Sets},
  journal = {Machine Learning},
  volume  = {100},
  number  = {2--3},
  pages   = {285--304},
  year    = {2015},
  doi     = {10.1007/s10994-015-5486-z}
}"""),
    "holm1979": ("Holm (1979)", """@article{holm1979,
  author  = {Holm, Sture},
  title   = {A Simple Sequentially Rejective Multiple Test Procedure},
  journal = {Scandinavian Journal of Statistics},
  volume  = {6},
  number  = {2},
  pages   = {65--70},
  year    = {1979}
}"""),
    "demsar2006": ("Demšar (2006)", """@article{demsar2006,
  author  = {Dem{\\v{s}}ar, Janez},
  title   = {Statistical Comparisons of Classifiers over Multiple Data Sets},
  journal = {Journal of Machine Learning Research},
  volume  = {7},
  pages   = {1--30},
  year    = {2006}
}"""),
    "olkin1995": ("Olkin & Finn (1995)", """@article{olkin1995,
  author  = {Olkin, Ingram and Finn, Jeremy D.},
  title   = {Correlations Redux},
  journal = {Psychological Bulletin},
  volume  = {118},
  number  = {1},
  pages   = {155--164},
  year    = {1995},
  doi     = {10.1037/0033-2909.118.1.155}
}"""),
    "viechtbauer2005": ("Viechtbauer (2005)", """@article{viechtbauer2005,
  author  = {Viechtbauer, Wolfgang},
  title   = {Bias and Efficiency of Meta-Analytic Variance Estimators in the Random-Effects
             Model},
  journal = {Journal of Educational and Behavioral Statistics},
  volume  = {30},
  number  = {3},
  pages   = {261--293},
  year    = {2005},
  doi     = {10.3102/10769986030003261}
}"""),
    "viechtbauer2010": ("Viechtbauer (2010)", """@article{viechtbauer2010,
  author  = {Viechtbauer, Wolfgang},
  title   = {Conducting Meta-Analyses in {R} with the metafor Package},
  journal = {Journal of Statistical Software},
  volume  = {36},
  number  = {3},
  pages   = {1--48},
  year    = {2010},
  doi     = {10.18637/jss.v036.i03}
}"""),
    "konstantopoulos2011": ("Konstantopoulos (2011)", """@article{konstantopoulos2011,
  author  = {Konstantopoulos, Spyros},
  title   = {Fixed Effects and Variance Components Estimation in Three-Level Meta-Analysis},
  journal = {Research Synthesis Methods},
  volume  = {2},
  number  = {1},
  pages   = {61--76},
  year    = {2011},
  doi     = {10.1002/jrsm.35}
}"""),
    "hedges2010": ("Hedges, Tipton & Johnson (2010)", """@article{hedges2010,
  author  = {Hedges, Larry V. and Tipton, Elizabeth and Johnson, Matthew C.},
  title   = {Robust Variance Estimation in Meta-Regression with Dependent Effect Size
             Estimates},
  journal = {Research Synthesis Methods},
  volume  = {1},
  number  = {1},
  pages   = {39--65},
  year    = {2010},
  doi     = {10.1002/jrsm.5}
}"""),
    "tipton2015": ("Tipton (2015)", """@article{tipton2015,
  author  = {Tipton, Elizabeth},
  title   = {Small Sample Adjustments for Robust Variance Estimation with Meta-Regression},
  journal = {Psychological Methods},
  volume  = {20},
  number  = {3},
  pages   = {375--393},
  year    = {2015},
  doi     = {10.1037/met0000011}
}"""),
    "schuirmann1987": ("Schuirmann (1987)", """@article{schuirmann1987,
  author  = {Schuirmann, Donald J.},
  title   = {A Comparison of the Two One-Sided Tests Procedure and the Power Approach for
             Assessing the Equivalence of Average Bioavailability},
  journal = {Journal of Pharmacokinetics and Biopharmaceutics},
  volume  = {15},
  number  = {6},
  pages   = {657--680},
  year    = {1987},
  doi     = {10.1007/BF01068419}
}"""),
    "bernau2014": ("Bernau et al. (2014)", """@article{bernau2014,
  author  = {Bernau, Christoph and Riester, Markus and Boulesteix, Anne-Laure and
             Parmigiani, Giovanni and Huttenhower, Curtis and Waldron, Levi and
             Trippa, Lorenzo},
  title   = {Cross-Study Validation for the Assessment of Prediction Algorithms},
  journal = {Bioinformatics},
  volume  = {30},
  number  = {12},
  pages   = {i105--i112},
  year    = {2014},
  doi     = {10.1093/bioinformatics/btu279}
}"""),
    "brier1950": ("Brier (1950)", """@article{brier1950,
  author  = {Brier, Glenn W.},
  title   = {Verification of Forecasts Expressed in Terms of Probability},
  journal = {Monthly Weather Review},
  volume  = {78},
  number  = {1},
  pages   = {1--3},
  year    = {1950}
}"""),
    "matteucci2024": ("Matteucci et al. (2024)", """@misc{matteucci2024,
  author        = {Matteucci, Federico and Arzamasov, Vadim and Cribeiro-Ramallo, Jose and
                   Heyden, Marco and Ntoutsi, Eirini and B{\\"o}hm, Klemens},
  title         = {Can You Trust Your Experiments? Generalizability of Experimental Studies},
  year          = {2024},
  eprint        = {2406.17374},
  archivePrefix = {arXiv},
  note          = {Reference implementation: genexpy}
}"""),
    "gretton2012": ("Gretton et al. (2012)", """@article{gretton2012,
  author  = {Gretton, Arthur and Borgwardt, Karsten M. and Rasch, Malte J. and
             Sch{\\"o}lkopf, Bernhard and Smola, Alexander},
  title   = {A Kernel Two-Sample Test},
  journal = {Journal of Machine Learning Research},
  volume  = {13},
  pages   = {723--773},
  year    = {2012}
}"""),
    "knapp2003": ("Knapp & Hartung (2003)", """@article{knapp2003,
  author  = {Knapp, Guido and Hartung, Joachim},
  title   = {Improved Tests for a Random Effects Meta-Regression with a Single Covariate},
  journal = {Statistics in Medicine},
  volume  = {22},
  number  = {17},
  pages   = {2693--2710},
  year    = {2003}
}"""),
    "inthout2014": ("IntHout et al. (2014)", """@article{inthout2014,
  author  = {IntHout, Joanna and Ioannidis, John P. A. and Borm, George F.},
  title   = {The {Hartung-Knapp-Sidik-Jonkman} Method for Random Effects Meta-Analysis Is
             Straightforward and Considerably Outperforms the Standard
             {DerSimonian-Laird} Method},
  journal = {BMC Medical Research Methodology},
  volume  = {14},
  pages   = {25},
  year    = {2014}
}"""),
    "viechtbauer2010b": ("Viechtbauer & Cheung (2010)", """@article{viechtbauer2010b,
  author  = {Viechtbauer, Wolfgang and Cheung, Mike W.-L.},
  title   = {Outlier and Influence Diagnostics for Meta-Analysis},
  journal = {Research Synthesis Methods},
  volume  = {1},
  number  = {2},
  pages   = {112--125},
  year    = {2010}
}"""),
    "egger1997": ("Egger et al. (1997)", """@article{egger1997,
  author  = {Egger, Matthias and Davey Smith, George and Schneider, Martin and Minder,
             Christoph},
  title   = {Bias in Meta-Analysis Detected by a Simple, Graphical Test},
  journal = {BMJ},
  volume  = {315},
  number  = {7109},
  pages   = {629--634},
  year    = {1997}
}"""),
    "begg1994": ("Begg & Mazumdar (1994)", """@article{begg1994,
  author  = {Begg, Colin B. and Mazumdar, Madhuchhanda},
  title   = {Operating Characteristics of a Rank Correlation Test for Publication Bias},
  journal = {Biometrics},
  volume  = {50},
  number  = {4},
  pages   = {1088--1101},
  year    = {1994}
}"""),
    "duval2000": ("Duval & Tweedie (2000)", """@article{duval2000,
  author  = {Duval, Sue and Tweedie, Richard},
  title   = {Trim and Fill: A Simple Funnel-Plot-Based Method of Testing and Adjusting for
             Publication Bias in Meta-Analysis},
  journal = {Biometrics},
  volume  = {56},
  number  = {2},
  pages   = {455--463},
  year    = {2000}
}"""),
    "berger1982": ("Berger (1982)", """@article{berger1982,
  author  = {Berger, Roger L.},
  title   = {Multiparameter Hypothesis Testing and Acceptance Sampling},
  journal = {Technometrics},
  volume  = {24},
  number  = {4},
  pages   = {295--300},
  year    = {1982}
}"""),
    "benjamini2008": ("Benjamini & Heller (2008)", """@article{benjamini2008,
  author  = {Benjamini, Yoav and Heller, Ruth},
  title   = {Screening for Partial Conjunction Hypotheses},
  journal = {Biometrics},
  volume  = {64},
  number  = {4},
  pages   = {1215--1222},
  year    = {2008}
}"""),
    "benavoli2017": ("Benavoli et al. (2017)", """@article{benavoli2017,
  author  = {Benavoli, Alessio and Corani, Giorgio and Dem{\\v{s}}ar, Janez and Zaffalon, Marco},
  title   = {Time for a Change: a Tutorial for Comparing Multiple Classifiers Through {Bayesian}
             Analysis},
  journal = {Journal of Machine Learning Research},
  volume  = {18},
  number  = {77},
  pages   = {1--36},
  year    = {2017}
}"""),
    "heller2014": ("Heller, Bogomolov & Benjamini (2014)", """@article{heller2014,
  author  = {Heller, Ruth and Bogomolov, Marina and Benjamini, Yoav},
  title   = {Deciding Whether Follow-up Studies Have Replicated Findings in a Preliminary
             Large-Scale Omics Study},
  journal = {Proceedings of the National Academy of Sciences},
  volume  = {111},
  number  = {46},
  pages   = {16262--16267},
  year    = {2014},
  doi     = {10.1073/pnas.1314814111}
}"""),
    "benjamini1995": ("Benjamini & Hochberg (1995)", """@article{benjamini1995,
  author  = {Benjamini, Yoav and Hochberg, Yosef},
  title   = {Controlling the False Discovery Rate: A Practical and Powerful Approach to
             Multiple Testing},
  journal = {Journal of the Royal Statistical Society: Series B},
  volume  = {57},
  number  = {1},
  pages   = {289--300},
  year    = {1995}
}"""),
    "patil2018": ("Patil & Parmigiani (2018)", """@article{patil2018,
  author  = {Patil, Prasad and Parmigiani, Giovanni},
  title   = {Training Replicable Predictors in Multiple Studies},
  journal = {Proceedings of the National Academy of Sciences},
  volume  = {115},
  number  = {11},
  pages   = {2578--2583},
  year    = {2018},
  doi     = {10.1073/pnas.1708283115}
}"""),
    "loewinger2022": ("Loewinger et al. (2022)", """@article{loewinger2022,
  author  = {Loewinger, Gabriel and Patil, Prasad and Kishida, Kenneth T. and
             Parmigiani, Giovanni},
  title   = {Hierarchical Resampling for Bagging in Multistudy Prediction with Applications
             to Human Neurochemical Sensing},
  journal = {The Annals of Applied Statistics},
  volume  = {16},
  number  = {4},
  pages   = {2145--2165},
  year    = {2022},
  doi     = {10.1214/21-AOAS1574}
}"""),
    "davison1997": ("Davison & Hinkley (1997)", """@book{davison1997,
  author       = {Davison, Anthony C. and Hinkley, David V.},
  title        = {Bootstrap Methods and Their Application},
  howpublished = {Cambridge University Press},
  year         = {1997}
}"""),
    "paule1982": ("Paule & Mandel (1982)", """@article{paule1982,
  author  = {Paule, Robert C. and Mandel, John},
  title   = {Consensus Values and Weighting Factors},
  journal = {Journal of Research of the National Bureau of Standards},
  volume  = {87},
  number  = {5},
  pages   = {377--385},
  year    = {1982}
}"""),
    "berger1996": ("Berger & Hsu (1996)", """@article{berger1996,
  author  = {Berger, Roger L. and Hsu, Jason C.},
  title   = {Bioequivalence Trials, Intersection-Union Tests and Equivalence Confidence Sets},
  journal = {Statistical Science},
  volume  = {11},
  number  = {4},
  pages   = {283--319},
  year    = {1996}
}"""),
    "szekely2013": ("Székely & Rizzo (2013)", """@article{szekely2013,
  author  = {Sz{\\'e}kely, G{\\'a}bor J. and Rizzo, Maria L.},
  title   = {Energy Statistics: A Class of Statistics Based on Distances},
  journal = {Journal of Statistical Planning and Inference},
  volume  = {143},
  number  = {8},
  pages   = {1249--1272},
  year    = {2013}
}"""),
    "gretton2009": ("Gretton et al. (2009)", """@inproceedings{gretton2009,
  author    = {Gretton, Arthur and Fukumizu, Kenji and Harchaoui, Zaid and
               Sriperumbudur, Bharath K.},
  title     = {A Fast, Consistent Kernel Two-Sample Test},
  booktitle = {Advances in Neural Information Processing Systems 22},
  pages     = {673--681},
  year      = {2009}
}"""),
    "satterthwaite1946": ("Satterthwaite (1946)", """@article{satterthwaite1946,
  author  = {Satterthwaite, Franklin E.},
  title   = {An Approximate Distribution of Estimates of Variance Components},
  journal = {Biometrics Bulletin},
  volume  = {2},
  number  = {6},
  pages   = {110--114},
  year    = {1946}
}"""),
    "song2012": ("Song et al. (2012)", """@article{song2012,
  author  = {Song, Le and Smola, Alex and Gretton, Arthur and Bedo, Justin and
             Borgwardt, Karsten},
  title   = {Feature Selection via Dependence Maximization},
  journal = {Journal of Machine Learning Research},
  volume  = {13},
  pages   = {1393--1434},
  year    = {2012}
}"""),
    "efron1981": ("Efron & Stein (1981)", """@article{efron1981,
  author  = {Efron, Bradley and Stein, Charles},
  title   = {The Jackknife Estimate of Variance},
  journal = {The Annals of Statistics},
  volume  = {9},
  number  = {3},
  pages   = {586--596},
  year    = {1981}
}"""),
    "lee1971": ("Lee (1971)", """@article{lee1971,
  author  = {Lee, Yoong-Sin},
  title   = {Some Results on the Sampling Distribution of the Multiple Correlation
             Coefficient},
  journal = {Journal of the Royal Statistical Society: Series B},
  volume  = {33},
  number  = {1},
  pages   = {117--130},
  year    = {1971},
  doi     = {10.1111/j.2517-6161.1971.tb00863.x}
}"""),
    "zou2007": ("Zou (2007)", """@article{zou2007,
  author  = {Zou, Guang Yong},
  title   = {Toward Using Confidence Intervals to Compare Correlations},
  journal = {Psychological Methods},
  volume  = {12},
  number  = {4},
  pages   = {399--413},
  year    = {2007},
  doi     = {10.1037/1082-989X.12.4.399}
}"""),
    "cohen2003": ("Cohen et al. (2003)", """@book{cohen2003,
  author       = {Cohen, Jacob and Cohen, Patricia and West, Stephen G. and Aiken, Leona S.},
  title        = {Applied Multiple Regression/Correlation Analysis for the Behavioral
                  Sciences},
  howpublished = {Lawrence Erlbaum Associates, 3rd edition},
  year         = {2003}
}"""),
    "anderson2016": ("Anderson & Maxwell (2016)", """@article{anderson2016,
  author  = {Anderson, Samantha F. and Maxwell, Scott E.},
  title   = {There's More Than One Way to Conduct a Replication Study: Beyond Statistical
             Significance},
  journal = {Psychological Methods},
  volume  = {21},
  number  = {1},
  pages   = {1--12},
  year    = {2016},
  doi     = {10.1037/met0000051}
}"""),
    "delong1988": ("DeLong et al. (1988)", """@article{delong1988,
  author  = {DeLong, Elizabeth R. and DeLong, David M. and Clarke-Pearson, Daniel L.},
  title   = {Comparing the Areas under Two or More Correlated Receiver Operating
             Characteristic Curves: A Nonparametric Approach},
  journal = {Biometrics},
  volume  = {44},
  number  = {3},
  pages   = {837--845},
  year    = {1988},
  doi     = {10.2307/2531595}
}"""),
    "wilson1927": ("Wilson (1927)", """@article{wilson1927,
  author  = {Wilson, Edwin B.},
  title   = {Probable Inference, the Law of Succession, and Statistical Inference},
  journal = {Journal of the American Statistical Association},
  volume  = {22},
  number  = {158},
  pages   = {209--212},
  year    = {1927},
  doi     = {10.1080/01621459.1927.10502953}
}"""),
    "efron1987": ("Efron (1987)", """@article{efron1987,
  author  = {Efron, Bradley},
  title   = {Better Bootstrap Confidence Intervals},
  journal = {Journal of the American Statistical Association},
  volume  = {82},
  number  = {397},
  pages   = {171--185},
  year    = {1987},
  doi     = {10.1080/01621459.1987.10478410}
}"""),
    "serfling1980": ("Serfling (1980)", """@book{serfling1980,
  author       = {Serfling, Robert J.},
  title        = {Approximation Theorems of Mathematical Statistics},
  howpublished = {Wiley},
  year         = {1980}
}"""),
    "bouckaert2003": ("Bouckaert (2003)", """@inproceedings{bouckaert2003,
  author    = {Bouckaert, Remco R.},
  title     = {Choosing Between Two Learning Algorithms Based on Calibrated Tests},
  booktitle = {Proceedings of the 20th International Conference on Machine Learning (ICML 2003)},
  pages     = {51--58},
  year      = {2003}
}"""),
    "bouckaert2004b": ("Bouckaert (2004)", """@inproceedings{bouckaert2004b,
  author    = {Bouckaert, Remco R.},
  title     = {Estimating Replicability of Classifier Learning Experiments},
  booktitle = {Proceedings of the 21st International Conference on Machine Learning (ICML 2004)},
  year      = {2004},
  doi       = {10.1145/1015330.1015338}
}"""),
    "mcnemar1947": ("McNemar (1947)", """@article{mcnemar1947,
  author  = {McNemar, Quinn},
  title   = {Note on the Sampling Error of the Difference Between Correlated Proportions or
             Percentages},
  journal = {Psychometrika},
  volume  = {12},
  number  = {2},
  pages   = {153--157},
  year    = {1947},
  doi     = {10.1007/BF02295996}
}"""),
    "edwards1948": ("Edwards (1948)", """@article{edwards1948,
  author  = {Edwards, Allen L.},
  title   = {Note on the “Correction for Continuity” in Testing the Significance of the
             Difference Between Correlated Proportions},
  journal = {Psychometrika},
  volume  = {13},
  number  = {3},
  pages   = {185--187},
  year    = {1948},
  doi     = {10.1007/BF02289261}
}"""),
    "cochran1950": ("Cochran (1950)", """@article{cochran1950,
  author  = {Cochran, William G.},
  title   = {The Comparison of Percentages in Matched Samples},
  journal = {Biometrika},
  volume  = {37},
  number  = {3/4},
  pages   = {256--266},
  year    = {1950},
  doi     = {10.2307/2332378}
}"""),
    "looney1988": ("Looney (1988)", """@article{looney1988,
  author  = {Looney, Stephen W.},
  title   = {A Statistical Technique for Comparing the Accuracies of Several Classifiers},
  journal = {Pattern Recognition Letters},
  volume  = {8},
  number  = {1},
  pages   = {5--9},
  year    = {1988},
  doi     = {10.1016/0167-8655(88)90016-5}
}"""),
    "kuncheva2004": ("Kuncheva (2004)", """@book{kuncheva2004,
  author       = {Kuncheva, Ludmila I.},
  title        = {Combining Pattern Classifiers: Methods and Algorithms},
  howpublished = {Wiley},
  year         = {2004}
}"""),
    "friedman1937": ("Friedman (1937)", """@article{friedman1937,
  author  = {Friedman, Milton},
  title   = {The Use of Ranks to Avoid the Assumption of Normality Implicit in the Analysis of
             Variance},
  journal = {Journal of the American Statistical Association},
  volume  = {32},
  number  = {200},
  pages   = {675--701},
  year    = {1937},
  doi     = {10.1080/01621459.1937.10503522}
}"""),
    "iman1980": ("Iman & Davenport (1980)", """@article{iman1980,
  author  = {Iman, Ronald L. and Davenport, James M.},
  title   = {Approximations of the Critical Region of the {Friedman} Statistic},
  journal = {Communications in Statistics -- Theory and Methods},
  volume  = {9},
  number  = {6},
  pages   = {571--595},
  year    = {1980},
  doi     = {10.1080/03610928008827904}
}"""),
    "skillings1981": ("Skillings & Mack (1981)", """@article{skillings1981,
  author  = {Skillings, John H. and Mack, Gregory A.},
  title   = {On the Use of a {Friedman}-Type Statistic in Balanced and Unbalanced Block
             Designs},
  journal = {Technometrics},
  volume  = {23},
  number  = {2},
  pages   = {171--177},
  year    = {1981},
  doi     = {10.1080/00401706.1981.10486261}
}"""),
    "chatfield2009": ("Chatfield & Mander (2009)", """@article{chatfield2009,
  author  = {Chatfield, Mark and Mander, Adrian},
  title   = {The {Skillings--Mack} Test ({Friedman} Test when There Are Missing Data)},
  journal = {The Stata Journal},
  volume  = {9},
  number  = {2},
  pages   = {299--305},
  year    = {2009},
  doi     = {10.1177/1536867X0900900208}
}"""),
    "kerby2014": ("Kerby (2014)", """@article{kerby2014,
  author  = {Kerby, Dave S.},
  title   = {The Simple Difference Formula: An Approach to Teaching Nonparametric
             Correlation},
  journal = {Comprehensive Psychology},
  volume  = {3},
  pages   = {11.IT.3.1},
  year    = {2014},
  doi     = {10.2466/11.IT.3.1}
}"""),
    "nemenyi1963": ("Nemenyi (1963)", """@phdthesis{nemenyi1963,
  author       = {Nemenyi, Peter B.},
  title        = {Distribution-Free Multiple Comparisons},
  howpublished = {PhD thesis, Princeton University},
  year         = {1963}
}"""),
    "wilcoxon1945": ("Wilcoxon (1945)", """@article{wilcoxon1945,
  author  = {Wilcoxon, Frank},
  title   = {Individual Comparisons by Ranking Methods},
  journal = {Biometrics Bulletin},
  volume  = {1},
  number  = {6},
  pages   = {80--83},
  year    = {1945},
  doi     = {10.2307/3001968}
}"""),
    "hochberg1988": ("Hochberg (1988)", """@article{hochberg1988,
  author  = {Hochberg, Yosef},
  title   = {A Sharper {Bonferroni} Procedure for Multiple Tests of Significance},
  journal = {Biometrika},
  volume  = {75},
  number  = {4},
  pages   = {800--802},
  year    = {1988},
  doi     = {10.1093/biomet/75.4.800}
}"""),
    "dunn1961": ("Dunn (1961)", """@article{dunn1961,
  author  = {Dunn, Olive Jean},
  title   = {Multiple Comparisons Among Means},
  journal = {Journal of the American Statistical Association},
  volume  = {56},
  number  = {293},
  pages   = {52--64},
  year    = {1961},
  doi     = {10.1080/01621459.1961.10482090}
}"""),
    "cohen1988": ("Cohen (1988)", """@book{cohen1988,
  author       = {Cohen, Jacob},
  title        = {Statistical Power Analysis for the Behavioral Sciences (2nd ed.)},
  howpublished = {Lawrence Erlbaum},
  year         = {1988}
}"""),
    "cliff1993": ("Cliff (1993)", """@article{cliff1993,
  author  = {Cliff, Norman},
  title   = {Dominance Statistics: Ordinal Analyses to Answer Ordinal Questions},
  journal = {Psychological Bulletin},
  volume  = {114},
  number  = {3},
  pages   = {494--509},
  year    = {1993},
  doi     = {10.1037/0033-2909.114.3.494}
}"""),
    "romano2006": ("Romano et al. (2006)", """@inproceedings{romano2006,
  author       = {Romano, Jeanine and Kromrey, Jeffrey D. and Coraggio, Jesse and Skowronek,
                  Jeff},
  title        = {Appropriate Statistics for Ordinal Level Data: Should We Really Be Using
                  t-test and {Cohen's} d for Evaluating Group Differences on the {NSSE} and
                  Other Surveys?},
  howpublished = {Annual Meeting of the Florida Association of Institutional Research},
  year         = {2006}
}"""),
    "herbold2020": ("Herbold (2020)", """@article{herbold2020,
  author  = {Herbold, Steffen},
  title   = {Autorank: A {Python} Package for Automated Ranking of Classifiers},
  journal = {Journal of Open Source Software},
  volume  = {5},
  number  = {48},
  pages   = {2173},
  year    = {2020},
  doi     = {10.21105/joss.02173}
}"""),
    "benavoli2014": ("Benavoli et al. (2014)", """@inproceedings{benavoli2014,
  author    = {Benavoli, Alessio and Corani, Giorgio and Mangili, Francesca and Zaffalon, Marco
               and Ruggeri, Fabrizio},
  title     = {A {Bayesian} {Wilcoxon} Signed-Rank Test Based on the {Dirichlet} Process},
  booktitle = {Proceedings of the 31st International Conference on Machine Learning (ICML
               2014), PMLR 32},
  pages     = {1026--1034},
  year      = {2014}
}"""),
    "corani2017": ("Corani et al. (2017)", """@article{corani2017,
  author  = {Corani, Giorgio and Benavoli, Alessio and Dem{\\v{s}}ar, Janez and Mangili,
             Francesca and Zaffalon, Marco},
  title   = {Statistical Comparison of Classifiers Through {Bayesian} Hierarchical Modelling},
  journal = {Machine Learning},
  volume  = {106},
  number  = {11},
  pages   = {1817--1837},
  year    = {2017},
  doi     = {10.1007/s10994-017-5641-9}
}"""),
    "calvo2018": ("Calvo et al. (2018)", """@inproceedings{calvo2018,
  author    = {Calvo, Borja and Ceberio, Josu and Lozano, Jose A.},
  title     = {{Bayesian} Inference for Algorithm Ranking Analysis},
  booktitle = {Proceedings of the Genetic and Evolutionary Computation Conference Companion
               (GECCO '18)},
  pages     = {324--325},
  year      = {2018},
  doi       = {10.1145/3205651.3205658}
}"""),
    "caron2012": ("Caron & Doucet (2012)", """@article{caron2012,
  author  = {Caron, Fran{\\c{c}}ois and Doucet, Arnaud},
  title   = {Efficient {Bayesian} Inference for Generalized {Bradley}--{Terry} Models},
  journal = {Journal of Computational and Graphical Statistics},
  volume  = {21},
  number  = {1},
  pages   = {174--196},
  year    = {2012},
  doi     = {10.1080/10618600.2012.638220}
}"""),
    "hunter2004mm": ("Hunter (2004)", """@article{hunter2004mm,
  author  = {Hunter, David R.},
  title   = {{MM} Algorithms for Generalized {Bradley}--{Terry} Models},
  journal = {The Annals of Statistics},
  volume  = {32},
  number  = {1},
  pages   = {384--406},
  year    = {2004},
  doi     = {10.1214/aos/1079120141}
}"""),
    "plackett1975": ("Plackett (1975)", """@article{plackett1975,
  author  = {Plackett, Robin L.},
  title   = {The Analysis of Permutations},
  journal = {Journal of the Royal Statistical Society: Series C},
  volume  = {24},
  number  = {2},
  pages   = {193--202},
  year    = {1975},
  doi     = {10.2307/2346567}
}"""),
    "phipson2010": ("Phipson & Smyth (2010)", """@article{phipson2010,
  author  = {Phipson, Belinda and Smyth, Gordon K.},
  title   = {Permutation {P}-values Should Never Be Zero: Calculating Exact {P}-values When
             Permutations Are Randomly Drawn},
  journal = {Statistical Applications in Genetics and Molecular Biology},
  volume  = {9},
  number  = {1},
  pages   = {Article 39},
  year    = {2010},
  doi     = {10.2202/1544-6115.1585}
}"""),
    "good2005": ("Good (2005)", """@book{good2005,
  author       = {Good, Phillip I.},
  title        = {Permutation, Parametric and Bootstrap Tests of Hypotheses (3rd ed.)},
  howpublished = {Springer},
  year         = {2005}
}"""),
    "bouthillier2021": ("Bouthillier et al. (2021)", """@inproceedings{bouthillier2021,
  author    = {Bouthillier, Xavier and Delaunay, Pierre and Bronzi, Mirko and Trofimov, Assya
               and Nichyporuk, Brennan and Szeto, Justin and Sepah, Naz and Raff, Edward and
               Madan, Kanika and Voleti, Vikram and Ebrahimi Kahou, Samira and Michalski,
               Vincent and Serdyuk, Dmitriy and Arbel, Tal and Pal, Chris and Varoquaux,
               Ga{\\"e}l and Vincent, Pascal},
  title     = {Accounting for Variance in Machine Learning Benchmarks},
  booktitle = {Proceedings of Machine Learning and Systems (MLSys 2021)},
  volume    = {3},
  year      = {2021}
}"""),
    "dersimonian1986": ("DerSimonian & Laird (1986)", """@article{dersimonian1986,
  author  = {DerSimonian, Rebecca and Laird, Nan},
  title   = {Meta-Analysis in Clinical Trials},
  journal = {Controlled Clinical Trials},
  volume  = {7},
  number  = {3},
  pages   = {177--188},
  year    = {1986}
}"""),
    "viechtbauer2007": ("Viechtbauer (2007)", """@article{viechtbauer2007,
  author  = {Viechtbauer, Wolfgang},
  title   = {Confidence Intervals for the Amount of Heterogeneity in Meta-Analysis},
  journal = {Statistics in Medicine},
  volume  = {26},
  number  = {1},
  pages   = {37--52},
  year    = {2007}
}"""),
    "higgins2002": ("Higgins & Thompson (2002)", """@article{higgins2002,
  author  = {Higgins, Julian P. T. and Thompson, Simon G.},
  title   = {Quantifying Heterogeneity in a Meta-Analysis},
  journal = {Statistics in Medicine},
  volume  = {21},
  number  = {11},
  pages   = {1539--1558},
  year    = {2002}
}"""),
    "higgins2009": ("Higgins, Thompson & Spiegelhalter (2009)", """@article{higgins2009,
  author  = {Higgins, Julian P. T. and Thompson, Simon G. and Spiegelhalter, David J.},
  title   = {A Re-Evaluation of Random-Effects Meta-Analysis},
  journal = {Journal of the Royal Statistical Society: Series A},
  volume  = {172},
  number  = {1},
  pages   = {137--159},
  year    = {2009}
}"""),
    "hedges1983": ("Hedges (1983)", """@article{hedges1983,
  author  = {Hedges, Larry V.},
  title   = {A Random Effects Model for Effect Sizes},
  journal = {Psychological Bulletin},
  volume  = {93},
  number  = {2},
  pages   = {388--395},
  year    = {1983}
}"""),
    "hunter2004": ("Hunter & Schmidt (2004)", """@book{hunter2004,
  author    = {Hunter, John E. and Schmidt, Frank L.},
  title     = {Methods of Meta-Analysis: Correcting Error and Bias in Research Findings
               (2nd ed.)},
  publisher = {Sage},
  year      = {2004}
}"""),
    "sidik2005": ("Sidik & Jonkman (2005)", """@article{sidik2005,
  author  = {Sidik, Kurex and Jonkman, Jeffrey N.},
  title   = {Simple Heterogeneity Variance Estimation for Meta-Analysis},
  journal = {Journal of the Royal Statistical Society: Series C},
  volume  = {54},
  number  = {2},
  pages   = {367--384},
  year    = {2005}
}"""),
    "raudenbush2009": ("Raudenbush (2009)", """@incollection{raudenbush2009,
  author    = {Raudenbush, Stephen W.},
  title     = {Analyzing Effect Sizes: Random-Effects Models},
  booktitle = {The Handbook of Research Synthesis and Meta-Analysis (2nd ed.)},
  editor    = {Cooper, Harris and Hedges, Larry V. and Valentine, Jeffrey C.},
  pages     = {295--315},
  publisher = {Russell Sage Foundation},
  year      = {2009}
}"""),
    "baujat2002": ("Baujat et al. (2002)", """@article{baujat2002,
  author  = {Baujat, Bertrand and Mah{\\'e}, C{\\'e}dric and Pignon, Jean-Pierre and Hill,
             Catherine},
  title   = {A Graphical Method for Exploring Heterogeneity in Meta-Analyses: Application to
             a Meta-Analysis of 65 Trials},
  journal = {Statistics in Medicine},
  volume  = {21},
  number  = {18},
  pages   = {2641--2652},
  year    = {2002}
}"""),
    "sterne2011": ("Sterne et al. (2011)", """@article{sterne2011,
  author  = {Sterne, Jonathan A. C. and Sutton, Alex J. and Ioannidis, John P. A. and Terrin,
             Norma and Jones, David R. and Lau, Joseph and Carpenter, James and R{\\"u}cker,
             Gerta and Harbord, Roger M. and Schmid, Christopher H. and others},
  title   = {Recommendations for Examining and Interpreting Funnel Plot Asymmetry in
             Meta-Analyses of Randomised Controlled Trials},
  journal = {BMJ},
  volume  = {343},
  pages   = {d4002},
  year    = {2011}
}"""),
    "borenstein2009": ("Borenstein et al. (2009)", """@book{borenstein2009,
  author    = {Borenstein, Michael and Hedges, Larry V. and Higgins, Julian P. T. and
               Rothstein, Hannah R.},
  title     = {Introduction to Meta-Analysis},
  publisher = {Wiley},
  year      = {2009}
}"""),
    "peters2008": ("Peters et al. (2008)", """@article{peters2008,
  author  = {Peters, Jaime L. and Sutton, Alex J. and Jones, David R. and Abrams, Keith R. and
             Rushton, Lesley},
  title   = {Contour-Enhanced Meta-Analysis Funnel Plots Help Distinguish Publication Bias
             from Other Causes of Asymmetry},
  journal = {Journal of Clinical Epidemiology},
  volume  = {61},
  number  = {10},
  pages   = {991--996},
  year    = {2008}
}"""),
    "lau1992": ("Lau et al. (1992)", """@article{lau1992,
  author  = {Lau, Joseph and Antman, Elliott M. and Jimenez-Silva, Jeanette and Kupelnick,
             Bruce and Mosteller, Frederick and Chalmers, Thomas C.},
  title   = {Cumulative Meta-Analysis of Therapeutic Trials for Myocardial Infarction},
  journal = {New England Journal of Medicine},
  volume  = {327},
  number  = {4},
  pages   = {248--254},
  year    = {1992}
}"""),
    "sterne2001": ("Sterne & Egger (2001)", """@article{sterne2001,
  author  = {Sterne, Jonathan A. C. and Egger, Matthias},
  title   = {Funnel Plots for Detecting Bias in Meta-Analysis: Guidelines on Choice of Axis},
  journal = {Journal of Clinical Epidemiology},
  volume  = {54},
  number  = {10},
  pages   = {1046--1055},
  year    = {2001}
}"""),
    "thompson1999": ("Thompson & Sharp (1999)", """@article{thompson1999,
  author  = {Thompson, Simon G. and Sharp, Stephen J.},
  title   = {Explaining Heterogeneity in Meta-Analysis: A Comparison of Methods},
  journal = {Statistics in Medicine},
  volume  = {18},
  number  = {20},
  pages   = {2693--2708},
  year    = {1999}
}"""),
    "bergkirkpatrick2012": ("Berg-Kirkpatrick et al. (2012)", """@inproceedings{bergkirkpatrick2012,
  author    = {Berg-Kirkpatrick, Taylor and Burkett, David and Klein, Dan},
  title     = {An Empirical Investigation of Statistical Significance in {NLP}},
  booktitle = {Proceedings of the 2012 Joint Conference on Empirical Methods in Natural
               Language Processing and Computational Natural Language Learning},
  pages     = {995--1005},
  year      = {2012}
}"""),
    "dror2018": ("Dror et al. (2018)", """@inproceedings{dror2018,
  author    = {Dror, Rotem and Baumer, Gili and Shlomov, Segev and Reichart, Roi},
  title     = {The Hitchhiker's Guide to Testing Statistical Significance in Natural Language
               Processing},
  booktitle = {Proceedings of the 56th Annual Meeting of the Association for Computational
               Linguistics (Volume 1: Long Papers)},
  pages     = {1383--1392},
  year      = {2018},
  doi       = {10.18653/v1/P18-1128}
}"""),
    "noreen1989": ("Noreen (1989)", """@book{noreen1989,
  author       = {Noreen, Eric W.},
  title        = {Computer-Intensive Methods for Testing Hypotheses: An Introduction},
  howpublished = {Wiley},
  year         = {1989}
}"""),
    "efron1993": ("Efron & Tibshirani (1993)", """@book{efron1993,
  author       = {Efron, Bradley and Tibshirani, Robert J.},
  title        = {An Introduction to the Bootstrap},
  howpublished = {Chapman and Hall},
  year         = {1993}
}"""),
    "welch1947": ("Welch (1947)", """@article{welch1947,
  author  = {Welch, Bernard L.},
  title   = {The Generalization of `Student's' Problem When Several Different Population
             Variances Are Involved},
  journal = {Biometrika},
  volume  = {34},
  number  = {1--2},
  pages   = {28--35},
  year    = {1947},
  doi     = {10.1093/biomet/34.1-2.28}
}"""),
    "harrell1982": ("Harrell et al. (1982)", """@article{harrell1982,
  author  = {Harrell, Frank E. and Califf, Robert M. and Pryor, David B. and Lee, Kerry L.
             and Rosati, Robert A.},
  title   = {Evaluating the Yield of Medical Tests},
  journal = {JAMA},
  volume  = {247},
  number  = {18},
  pages   = {2543--2546},
  year    = {1982},
  doi     = {10.1001/jama.1982.03320430047030}
}"""),
    "harrell1996": ("Harrell et al. (1996)", """@article{harrell1996,
  author  = {Harrell, Frank E. and Lee, Kerry L. and Mark, Daniel B.},
  title   = {Multivariable Prognostic Models: Issues in Developing Models, Evaluating
             Assumptions and Adequacy, and Measuring and Reducing Errors},
  journal = {Statistics in Medicine},
  volume  = {15},
  number  = {4},
  pages   = {361--387},
  year    = {1996},
  doi     = {10.1002/(SICI)1097-0258(19960229)15:4<361::AID-SIM168>3.0.CO;2-4}
}"""),
    "uno2011": ("Uno et al. (2011)", """@article{uno2011,
  author  = {Uno, Hajime and Cai, Tianxi and Pencina, Michael J. and D'Agostino, Ralph B.
             and Wei, Lee-Jen},
  title   = {On the C-Statistics for Evaluating Overall Adequacy of Risk Prediction
             Procedures with Censored Survival Data},
  journal = {Statistics in Medicine},
  volume  = {30},
  number  = {10},
  pages   = {1105--1117},
  year    = {2011},
  doi     = {10.1002/sim.4154}
}"""),
    "uno2007": ("Uno et al. (2007)", """@article{uno2007,
  author  = {Uno, Hajime and Cai, Tianxi and Tian, Lu and Wei, Lee-Jen},
  title   = {Evaluating Prediction Rules for t-Year Survivors with Censored Regression
             Models},
  journal = {Journal of the American Statistical Association},
  volume  = {102},
  number  = {478},
  pages   = {527--537},
  year    = {2007},
  doi     = {10.1198/016214507000000149}
}"""),
    "hung2010": ("Hung & Chiang (2010)", """@article{hung2010,
  author  = {Hung, Hung and Chiang, Chin-Tsang},
  title   = {Estimation Methods for Time-Dependent {AUC} Models with Survival Data},
  journal = {Canadian Journal of Statistics},
  volume  = {38},
  number  = {1},
  pages   = {8--26},
  year    = {2010},
  doi     = {10.1002/cjs.10046}
}"""),
    "lambert2016": ("Lambert & Chevret (2016)", """@article{lambert2016,
  author  = {Lambert, J{\\'e}r{\\^o}me and Chevret, Sylvie},
  title   = {Summary Measure of Discrimination in Survival Models Based on
             Cumulative/Dynamic Time-Dependent {ROC} Curves},
  journal = {Statistical Methods in Medical Research},
  volume  = {25},
  number  = {5},
  pages   = {2088--2102},
  year    = {2016},
  doi     = {10.1177/0962280213515571}
}"""),
    "graf1999": ("Graf et al. (1999)", """@article{graf1999,
  author  = {Graf, Erika and Schmoor, Claudia and Sauerbrei, Willi and Schumacher, Martin},
  title   = {Assessment and Comparison of Prognostic Classification Schemes for Survival
             Data},
  journal = {Statistics in Medicine},
  volume  = {18},
  number  = {17--18},
  pages   = {2529--2545},
  year    = {1999},
  doi     = {10.1002/(SICI)1097-0258(19990915/30)18:17/18<2529::AID-SIM274>3.0.CO;2-5}
}"""),
    "debray2017": ("Debray et al. (2017)", """@article{debray2017,
  author  = {Debray, Thomas P. A. and Damen, Johanna A. A. G. and Snell, Kym I. E. and
             Ensor, Joie and Hooft, Lotty and Reitsma, Johannes B. and Riley, Richard D. and
             Moons, Karel G. M.},
  title   = {A Guide to Systematic Review and Meta-Analysis of Prediction Model Performance},
  journal = {BMJ},
  volume  = {356},
  pages   = {i6460},
  year    = {2017},
  doi     = {10.1136/bmj.i6460}
}"""),
    "kaplan1958": ("Kaplan & Meier (1958)", """@article{kaplan1958,
  author  = {Kaplan, Edward L. and Meier, Paul},
  title   = {Nonparametric Estimation from Incomplete Observations},
  journal = {Journal of the American Statistical Association},
  volume  = {53},
  number  = {282},
  pages   = {457--481},
  year    = {1958},
  doi     = {10.1080/01621459.1958.10501452}
}"""),
}

#: section key -> the references its methods rest on
SECTION_REFERENCES: dict[str, tuple[str, ...]] = {
    "resampling": ("etherington2019", "verbyla1989", "efron1997", "bates2024"),
    "compare": ("gardner2017", "nadeau2003", "bouckaert2004", "dietterich1998", "alpaydin1999",
                "corani2015", "holm1979", "demsar2006", "benavoli2017"),
    "replicate": ("vijayakumar2021", "olkin1995", "schuirmann1987", "viechtbauer2005",
                  "viechtbauer2010", "knapp2003", "inthout2014", "viechtbauer2010b", "egger1997",
                  "begg1994", "duval2000"),
    "multistudy": ("parmigiani2023", "bernau2014", "brier1950", "berger1982",
                   "benjamini2008"),
    "generalize": ("matteucci2024", "gretton2012"),
}


def bibtex_for(keys) -> str:
    """The BibTeX entries of ``keys`` (in order, without repeats), one blank line apart."""
    seen = dict.fromkeys(k for k in keys if k in BIBTEX)
    return "\n\n".join(BIBTEX[k][1] for k in seen) + ("\n" if seen else "")


def citation_text(keys) -> str:
    """``'Gardner & Brooks (2017); Nadeau & Bengio (2003)'`` for ``keys``."""
    return "; ".join(BIBTEX[k][0] for k in dict.fromkeys(keys) if k in BIBTEX)


_ACCENTS = {'"o': "ö", '"u': "ü", '"a': "ä", "'e": "é", "i": "ı", "v{s}": "š", "v{c}": "č"}


def _field(entry: str, name: str) -> str:
    """The value of BibTeX field ``name`` in ``entry`` (braces balanced, TeX accents decoded)."""
    match = re.search(rf"^\s*{name}\s*=\s*\{{", entry, re.M)
    if not match:
        return ""
    depth, i = 1, match.end()
    while depth and i < len(entry):
        depth += {"{": 1, "}": -1}.get(entry[i], 0)
        i += 1
    text = " ".join(entry[match.end():i - 1].split())
    for tex, char in _ACCENTS.items():
        text = text.replace("{\\" + tex + "}", char).replace("\\" + tex, char)
    return text.replace("{", "").replace("}", "").replace("--", "–")


def _authors(text: str) -> str:
    people = [a.strip() for a in text.split(" and ")]
    names = []
    for person in people:
        last, _, first = person.partition(",")
        initials = " ".join(f"{p[0]}." for p in re.split(r"[\s]+", first.strip()) if p)
        names.append(f"{last.strip()}, {initials}" if initials else last.strip())
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " & " + names[-1]


def full_citation(key: str) -> str:
    """One reference in full, in plain text (APA-like), from its BibTeX entry.

    Parameters
    ----------
    key : str
        A key of :data:`BIBTEX`.

    Returns
    -------
    str
        ``'Authors (Year). Title. Journal, Volume(Number), Pages. https://doi.org/...'``.

    See Also
    --------
    citation_text : The short Author (Year) form.
    reference_list : Several references, one per line.

    Examples
    --------
    >>> print(full_citation("holm1979"))
    Holm, S. (1979). A Simple Sequentially Rejective Multiple Test Procedure. Scandinavian Journal of Statistics, 6(2), 65–70.
    """
    entry = BIBTEX[key][1]
    parts = [f"{_authors(_field(entry, 'author'))} ({_field(entry, 'year')}).",
             f"{_field(entry, 'title').rstrip('.')}."]
    venue = _field(entry, "journal") or _field(entry, "booktitle") or _field(entry, "howpublished")
    if not venue and _field(entry, "eprint"):
        venue = f"arXiv:{_field(entry, 'eprint')}"
    if venue:
        volume, number, pages = (_field(entry, n) for n in ("volume", "number", "pages"))
        where = venue + (f", {volume}" if volume else "") + (f"({number})" if number else "")
        where += f", {pages}" if pages else ""
        parts.append(where + ".")
    doi, url = _field(entry, "doi"), _field(entry, "url")
    if doi:
        parts.append(f"https://doi.org/{doi}")
    elif url:
        parts.append(url)
    return " ".join(parts)


def reference_list(keys) -> list[str]:
    """Full citations of ``keys`` (in order, without repeats), sorted by first author.

    Parameters
    ----------
    keys : iterable of str
        Keys of :data:`BIBTEX`; unknown keys are left out.

    Returns
    -------
    list of str
        One plain-text reference each.

    See Also
    --------
    full_citation : One reference.

    Examples
    --------
    >>> [r[:20] for r in reference_list(["nadeau2003", "holm1979"])]
    ['Holm, S. (1979). A S', 'Nadeau, C. & Bengio,']
    """
    known = [k for k in dict.fromkeys(keys) if k in BIBTEX]
    return sorted((full_citation(k) for k in known), key=str.casefold)
